// Chunk encoding, and the walk over a stored chunk's columns.
#include "data/format/chunk.hpp"

#include <algorithm>
#include <cstring>

#include "base/digest.hpp"
#include "data/sample_values.hpp"

namespace actorrec::data::format {
namespace {

template <class Column>
void AppendColumn(std::string* out, const Column& column) {
  out->append(reinterpret_cast<const char*>(column.data()), column.size() * sizeof(column.data()[0]));
  out->resize(Align8(out->size()), '\0');
}

// Hands out the 8-aligned columns of a chunk front to back, refusing any that
// would reach into the checksum.
class ColumnWalk {
 public:
  explicit ColumnWalk(std::string_view body) : body_(body) {}
  // The next column of `count` 4-byte items, or null when it does not fit.
  const uint8_t* Take(uint64_t count) {
    const uint64_t bytes = Align8(count * 4);
    if (count > body_.size() || body_.size() - at_ < bytes) return nullptr;
    const auto* column = reinterpret_cast<const uint8_t*>(body_.data()) + at_;
    at_ += bytes;
    return column;
  }
  bool AtEnd() const { return at_ == body_.size(); }

 private:
  std::string_view body_;
  size_t at_ = 0;
};

}  // namespace

void EncodeChunk(const SampleBlock& block, const std::vector<bool>& multi_hot, uint64_t index, std::string* out) {
  out->clear();
  AppendColumn(out, block.labels);
  AppendColumn(out, block.dense);
  for (size_t t = 0; t < block.tables.size(); ++t) {
    if (multi_hot[t]) AppendColumn(out, block.tables[t].offsets);
    AppendColumn(out, block.tables[t].values);
  }
  const uint64_t sum = Digest64(*out, index);
  out->append(reinterpret_cast<const char*>(&sum), sizeof sum);
}

Status ParseChunk(std::string_view bytes, const HeaderInfo& header, uint64_t index, bool verify,
                  const std::string& path, ChunkView* view) {
  // Named only on failure: a shuffled batch views hundreds of chunks.
  const auto where = [&] { return "chunk " + std::to_string(index) + " of " + path; };
  if (bytes.size() < kChecksumBytes) return Status::Corruption(where() + ": shorter than its checksum");
  const std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  if (verify) {
    uint64_t stored;
    std::memcpy(&stored, body.data() + body.size(), sizeof stored);
    if (stored != Digest64(body, index)) return Status::Corruption("checksum mismatch in " + where());
  }

  const uint32_t m = header.chunk_size(index);
  const uint64_t num_dense = header.schema.num_dense();
  ColumnWalk walk(body);
  view->size = m;
  // The columns are 8-aligned in an mmap'ed (page-aligned) file: used in place.
  view->labels = reinterpret_cast<const float*>(walk.Take(m));
  view->dense = reinterpret_cast<const float*>(walk.Take(m * num_dense));
  const auto overrun = [&] { return Status::Corruption(where() + ": columns overrun the chunk"); };
  if (view->labels == nullptr || view->dense == nullptr) return overrun();
  view->tables.resize(header.schema.num_tables());
  for (size_t t = 0; t < view->tables.size(); ++t) {
    ChunkView::Table& table = view->tables[t];
    table.offsets = nullptr;
    table.num_values = m;
    if (header.multi_hot[t]) {
      table.offsets = reinterpret_cast<const uint32_t*>(walk.Take(uint64_t{m} + 1));
      if (table.offsets == nullptr) return overrun();
      table.num_values = table.offsets[m];
    }
    table.values = reinterpret_cast<const RowId*>(walk.Take(table.num_values));
    if (table.values == nullptr) return overrun();
  }
  if (!walk.AtEnd()) return Status::Corruption(where() + ": size disagrees with its columns");
  if (!verify) return Status::Ok();

  // Values a model would train to NaN on: the writer refuses them, so only a
  // file from elsewhere (or an older build) has them. InvalidArgument, not
  // Corruption: the bytes are as written, the data is bad.
  const auto sample = [&](uint64_t i) {
    return where() + ": sample " + std::to_string(index * header.samples_per_chunk + i);
  };
  for (uint32_t i = 0; i < m; ++i) {
    if (!IsLabel(view->labels[i])) {
      return Status::InvalidArgument(sample(i) + ": unknown label value: label is " + ValueText(view->labels[i]) +
                                     ", expected 0 or 1");
    }
  }
  if (const long at = FirstNonFinite(view->dense, m * num_dense); at >= 0) {
    const auto k = static_cast<uint64_t>(at);
    return Status::InvalidArgument(sample(k / num_dense) + ": non-finite dense value: " +
                                   header.schema.dense_names[k % num_dense] + " is " + ValueText(view->dense[k]));
  }
  for (size_t t = 0; t < view->tables.size(); ++t) {
    const ChunkView::Table& table = view->tables[t];
    const TableSchema& schema = header.schema.tables[t];
    if (table.offsets != nullptr) {
      bool ordered = table.offsets[0] == 0;
      for (uint32_t i = 0; i < m; ++i) ordered &= table.offsets[i] <= table.offsets[i + 1];
      if (!ordered) return Status::Corruption(where() + ": offsets of table " + schema.name + " are not ordered");
    }
    // One branch-free pass (vectorizes), then a search only on failure.
    RowId max_id = 0;
    for (uint64_t i = 0; i < table.num_values; ++i) max_id = std::max(max_id, table.values[i]);
    if (table.num_values > 0 && max_id >= schema.rows) {
      return Status::Corruption(where() + ": table " + schema.name + " has row id " + std::to_string(max_id) +
                                " but only " + std::to_string(schema.rows) + " rows");
    }
  }
  return Status::Ok();
}

}  // namespace actorrec::data::format
