// ShardStore: the embedding shard's functional core. It holds the rows of
// one hash partition of every table, each row `width` weights followed by
// its optimizer state, created lazily the first time it is touched (from a
// deterministic initializer of (t, r)), so a 33 M-row table costs memory
// only for the rows training touches.
//
// The consistency protocol (a fetch served only after the write-backs it
// depends on, ARCHITECTURE §3) is the shard actor's job; the store just
// reads and writes rows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/status.hpp"

namespace actorrec::embedding {

// The shard owning (t, r): a fixed mixing hash, the same in every process.
uint32_t ShardOf(uint32_t table, uint64_t row, uint32_t shards);

struct RowFormat {
  uint32_t width = 0;         // weights
  uint32_t state_floats = 0;  // optimizer state after them
  uint32_t floats() const { return width + state_floats; }
};

// Fills all floats() of a new row (t, r).
using RowInit = std::function<void(uint32_t table, uint64_t row, float* row_out)>;

class ShardStore {
 public:
  ShardStore(uint32_t shard, uint32_t shards, std::vector<uint64_t> table_rows, RowFormat format, RowInit init);

  // Copies n rows into out (n × floats()), creating untouched ones.
  // InvalidArgument naming the first (t, r) out of range or not owned; then
  // nothing is changed.
  Status Fetch(const uint32_t* tables, const uint32_t* rows, size_t n, float* out);
  // Overwrites n whole rows (write-back), creating them if needed.
  Status Store(const uint32_t* tables, const uint32_t* rows, size_t n, const float* in);
  // Calls update(row, i) for each of the n rows in order, creating them first.
  Status Update(const uint32_t* tables, const uint32_t* rows, size_t n,
                const std::function<void(float* row, size_t i)>& update);
  // Copies row (t, r) into out without creating it: an untouched row reads
  // as its initial value (evaluation must not change what the shard holds).
  Status Peek(uint32_t table, uint32_t row, float* out) const;

  size_t resident_rows() const { return resident_; }
  size_t memory_bytes() const;
  const RowFormat& format() const { return format_; }

  // Rows in ascending (t, r) order.
  void ForEachRow(const std::function<void(uint32_t table, uint64_t row, const float* data)>& visit) const;
  // A digest of (t, r, bytes) of every row in (t, r) order: equal digests,
  // equal contents.
  uint64_t Digest() const;

 private:
  Status Check(uint32_t table, uint32_t row) const;
  float* Row(uint32_t table, uint32_t row);  // creating it
  float* RowAt(uint32_t index) { return chunks_[index / kChunkRows].get() + size_t{index % kChunkRows} * format_.floats(); }
  const float* RowAt(uint32_t index) const {
    return chunks_[index / kChunkRows].get() + size_t{index % kChunkRows} * format_.floats();
  }

  // Rows live in fixed-size chunks, so growing never moves a row.
  static constexpr uint32_t kChunkRows = 4096;

  uint32_t shard_, shards_;
  std::vector<uint64_t> table_rows_;
  RowFormat format_;
  RowInit init_;
  std::vector<std::unordered_map<uint32_t, uint32_t>> index_;  // per table: row -> row index
  std::vector<std::unique_ptr<float[]>> chunks_;
  uint32_t resident_ = 0;
};

}  // namespace actorrec::embedding
