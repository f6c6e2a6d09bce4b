#include "actors/embedding/shard_store.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/digest.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {

uint32_t ShardOf(uint32_t table, uint64_t row, uint32_t shards) {
  const uint64_t h = data::gen::HashPair(0x73686172640000ULL + table, row);
  return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * shards) >> 64);
}

ShardStore::ShardStore(uint32_t shard, uint32_t shards, std::vector<uint64_t> table_rows, RowFormat format,
                       RowInit init)
    : shard_(shard),
      shards_(shards),
      table_rows_(std::move(table_rows)),
      format_(format),
      init_(std::move(init)),
      index_(table_rows_.size()) {}

Status ShardStore::Check(uint32_t table, uint32_t row) const {
  if (table >= table_rows_.size() || row >= table_rows_[table]) {
    return Status::InvalidArgument("embedding shard " + std::to_string(shard_) + ": row (" + std::to_string(table) +
                                   ", " + std::to_string(row) + ") is out of range");
  }
  if (ShardOf(table, row, shards_) != shard_) {
    return Status::InvalidArgument("embedding shard " + std::to_string(shard_) + ": row (" + std::to_string(table) +
                                   ", " + std::to_string(row) + ") belongs to shard " +
                                   std::to_string(ShardOf(table, row, shards_)));
  }
  return Status::Ok();
}

float* ShardStore::Row(uint32_t table, uint32_t row) {
  auto [it, fresh] = index_[table].try_emplace(row, resident_);
  if (!fresh) return RowAt(it->second);
  if (resident_ % kChunkRows == 0) {
    chunks_.push_back(std::make_unique<float[]>(size_t{kChunkRows} * format_.floats()));
  }
  float* data = RowAt(resident_++);
  init_(table, row, data);
  return data;
}

Status ShardStore::Fetch(const uint32_t* tables, const uint32_t* rows, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) {
    if (Status st = Check(tables[i], rows[i]); !st.ok()) return st;
  }
  const size_t f = format_.floats();
  for (size_t i = 0; i < n; ++i) std::memcpy(out + i * f, Row(tables[i], rows[i]), f * sizeof(float));
  return Status::Ok();
}

Status ShardStore::Store(const uint32_t* tables, const uint32_t* rows, size_t n, const float* in) {
  for (size_t i = 0; i < n; ++i) {
    if (Status st = Check(tables[i], rows[i]); !st.ok()) return st;
  }
  const size_t f = format_.floats();
  for (size_t i = 0; i < n; ++i) std::memcpy(Row(tables[i], rows[i]), in + i * f, f * sizeof(float));
  return Status::Ok();
}

Status ShardStore::Update(const uint32_t* tables, const uint32_t* rows, size_t n,
                          const std::function<void(float* row, size_t i)>& update) {
  for (size_t i = 0; i < n; ++i) {
    if (Status st = Check(tables[i], rows[i]); !st.ok()) return st;
  }
  for (size_t i = 0; i < n; ++i) update(Row(tables[i], rows[i]), i);
  return Status::Ok();
}

Status ShardStore::Peek(uint32_t table, uint32_t row, float* out) const {
  if (Status st = Check(table, row); !st.ok()) return st;
  auto it = index_[table].find(row);
  if (it == index_[table].end()) {
    init_(table, row, out);
  } else {
    std::memcpy(out, RowAt(it->second), format_.floats() * sizeof(float));
  }
  return Status::Ok();
}

size_t ShardStore::memory_bytes() const {
  size_t bytes = chunks_.size() * size_t{kChunkRows} * format_.floats() * sizeof(float);
  for (const auto& m : index_) bytes += m.bucket_count() * sizeof(void*) + m.size() * (2 * sizeof(uint32_t) + sizeof(void*));
  return bytes;
}

void ShardStore::ForEachRow(const std::function<void(uint32_t table, uint64_t row, const float* data)>& visit) const {
  for (uint32_t t = 0; t < index_.size(); ++t) {
    std::vector<std::pair<uint32_t, uint32_t>> rows(index_[t].begin(), index_[t].end());
    std::sort(rows.begin(), rows.end());
    for (const auto& [row, index] : rows) visit(t, row, RowAt(index));
  }
}

uint64_t ShardStore::Digest() const {
  uint64_t digest = 0;
  const size_t bytes = format_.floats() * sizeof(float);
  ForEachRow([&](uint32_t t, uint64_t r, const float* data) {
    digest = Digest64(std::string_view(reinterpret_cast<const char*>(data), bytes), digest ^ data::gen::HashPair(t, r));
  });
  return digest;
}

}  // namespace actorrec::embedding
