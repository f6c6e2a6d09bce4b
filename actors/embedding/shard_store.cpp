// The shard's rows: ownership checks, lazy creation, fetch / store / update.
#include "actors/embedding/shard_store.hpp"

#include <cstring>
#include <string>
#include <string_view>

#include "base/digest.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {
namespace {

// Keeps the partition's hash apart from every other use of HashPair.
constexpr uint64_t kShardSalt = 0x73686172640000ULL;  // "shard\0\0"

std::string RowName(uint32_t table, uint64_t row) {
  std::string s = "row (";
  s.append(std::to_string(table)).append(", ").append(std::to_string(row)).append(")");
  return s;
}

}  // namespace

uint32_t ShardOf(uint32_t table, uint64_t row, uint32_t shards) {
  // Multiply-shift maps the 64-bit hash onto [0, shards) without modulo bias.
  const uint64_t h = data::gen::HashPair(kShardSalt + table, row);
  return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * shards) >> 64);
}

ShardStore::ShardStore(uint32_t shard, uint32_t shards, std::vector<uint64_t> table_rows, RowFormat format,
                       RowInit init)
    : shard_(shard),
      shards_(shards),
      table_rows_(std::move(table_rows)),
      format_(format),
      init_(std::move(init)),
      arena_(format.floats()) {
  ACTORREC_ASSERT(shard < shards, "a shard index must be below the shard count");
  ACTORREC_ASSERT(format.floats() > 0 && format.floats() <= (uint32_t{1} << 20), "row format out of bounds");
  index_.reserve(table_rows_.size());
  for (const uint64_t rows : table_rows_) index_.emplace_back(rows);
}

Status ShardStore::Check(uint32_t table, uint32_t row) const {
  if (table >= table_rows_.size() || row >= table_rows_[table]) {
    std::string msg = "embedding shard ";
    msg.append(std::to_string(shard_)).append(": ").append(RowName(table, row)).append(" is out of range");
    return Status::InvalidArgument(std::move(msg));
  }
  if (const uint32_t owner = ShardOf(table, row, shards_); owner != shard_) {
    std::string msg = "embedding shard ";
    msg.append(std::to_string(shard_)).append(": ").append(RowName(table, row)).append(" belongs to shard ");
    msg.append(std::to_string(owner));
    return Status::InvalidArgument(std::move(msg));
  }
  return Status::Ok();
}

Status ShardStore::CheckAll(const uint32_t* tables, const uint32_t* rows, size_t n) const {
  for (size_t i = 0; i < n; ++i) {
    if (Status st = Check(tables[i], rows[i]); !st.ok()) return st;
  }
  return Status::Ok();
}

float* ShardStore::Row(uint32_t table, uint32_t row, bool* created) {
  RowIndex& index = index_[table];
  if (const uint32_t slot = index.Find(row); slot != RowIndex::kNoRow) {
    *created = false;
    return arena_.At(slot);
  }
  ACTORREC_ASSERT(arena_.rows() < RowIndex::kNoRow - 1, "a shard holds at most 2^32 - 2 rows");
  const uint32_t slot = arena_.Append();
  index.Insert(row, slot);
  *created = true;
  return arena_.At(slot);
}

float* ShardStore::InitializedRow(uint32_t table, uint32_t row) {
  bool created;
  float* data = Row(table, row, &created);
  if (created) init_(table, row, data);
  return data;
}

Status ShardStore::Fetch(const uint32_t* tables, const uint32_t* rows, size_t n, float* out) {
  if (Status st = CheckAll(tables, rows, n); !st.ok()) return st;
  const size_t f = format_.floats();
  for (size_t i = 0; i < n; ++i) std::memcpy(out + i * f, InitializedRow(tables[i], rows[i]), f * sizeof(float));
  return Status::Ok();
}

Status ShardStore::Store(const uint32_t* tables, const uint32_t* rows, size_t n, const float* in) {
  if (Status st = CheckAll(tables, rows, n); !st.ok()) return st;
  const size_t f = format_.floats();
  bool created;
  for (size_t i = 0; i < n; ++i) std::memcpy(Row(tables[i], rows[i], &created), in + i * f, f * sizeof(float));
  return Status::Ok();
}

Status ShardStore::Update(const uint32_t* tables, const uint32_t* rows, size_t n,
                          const std::function<void(float* row, size_t i)>& update) {
  if (Status st = CheckAll(tables, rows, n); !st.ok()) return st;
  for (size_t i = 0; i < n; ++i) update(InitializedRow(tables[i], rows[i]), i);
  return Status::Ok();
}

Status ShardStore::Peek(uint32_t table, uint32_t row, float* out) const {
  if (Status st = Check(table, row); !st.ok()) return st;
  if (const uint32_t slot = index_[table].Find(row); slot != RowIndex::kNoRow) {
    std::memcpy(out, arena_.At(slot), format_.floats() * sizeof(float));
  } else {
    init_(table, row, out);
  }
  return Status::Ok();
}

size_t ShardStore::memory_bytes() const {
  size_t bytes = arena_.memory_bytes() + table_rows_.capacity() * sizeof(uint64_t);
  for (const RowIndex& index : index_) bytes += sizeof(RowIndex) + index.memory_bytes();
  return bytes;
}

void ShardStore::ForEachRow(const std::function<void(uint32_t table, uint64_t row, const float* data)>& visit) const {
  for (uint32_t t = 0; t < index_.size(); ++t) {
    for (const auto& [row, slot] : index_[t].SortedEntries()) visit(t, row, arena_.At(slot));
  }
}

uint64_t ShardStore::Digest() const {
  // Chained: each row's digest is seeded with everything before it, and its
  // (t, r) are hashed in, so moving a value to another row changes it too.
  uint64_t digest = Digest64(std::string_view(reinterpret_cast<const char*>(&format_), sizeof format_));
  const size_t bytes = format_.floats() * sizeof(float);
  ForEachRow([&](uint32_t t, uint64_t r, const float* data) {
    digest = Digest64(std::string_view(reinterpret_cast<const char*>(data), bytes), digest ^ data::gen::HashPair(t, r));
  });
  return digest;
}

}  // namespace actorrec::embedding
