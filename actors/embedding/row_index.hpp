// RowIndex: one table's map from row id to the row's slot in the shard's
// arena (row_arena.hpp), sized by the rows actually touched.
//
// Two representations, chosen once from the table's cardinality:
// (1) Direct: an array over every row id of the table (4 bytes per id,
//     kNoRow for an absent row), when the table has at most
//     kDirectIndexMaxRows rows. A small table's rows are all touched early in
//     training, and at that size the array costs at most 256 KiB and one
//     load per lookup.
// (2) Hashed: open addressing with linear probing over (row, slot) pairs,
//     8 bytes per bucket, capacity a power of two kept at most half full, so
//     a table of 33 M rows of which 1000 are touched costs 16 KiB here. The
//     bucket comes from the top bits of a SplitMix64 mix of the row id, so
//     sequential or strided ids spread as well as random ones. Growing
//     rehashes the pairs only; the rows themselves never move.
// Rows are never removed (a shard holds a row from its first touch until it
// is destroyed), so there are no tombstones.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace actorrec::embedding {

class RowIndex {
 public:
  static constexpr uint32_t kNoRow = std::numeric_limits<uint32_t>::max();
  // The largest table indexed directly (see (1)).
  static constexpr uint64_t kDirectIndexMaxRows = uint64_t{1} << 16;

  explicit RowIndex(uint64_t table_rows);

  // The arena slot of `row`, or kNoRow.
  uint32_t Find(uint32_t row) const;
  // Records that `row` (absent) lives at `slot`. REQUIRES: Find(row) == kNoRow,
  // slot != kNoRow.
  void Insert(uint32_t row, uint32_t slot);

  bool direct() const { return direct_; }
  size_t size() const { return size_; }
  size_t memory_bytes() const;
  // The (row, slot) pairs in ascending row order.
  std::vector<std::pair<uint32_t, uint32_t>> SortedEntries() const;

 private:
  struct Bucket {
    uint32_t row;
    uint32_t slot;  // kNoRow: empty
  };
  size_t BucketOf(uint32_t row) const;
  void Grow();

  bool direct_;
  size_t size_ = 0;
  std::vector<uint32_t> slots_;  // direct: slot of each row id
  std::vector<Bucket> buckets_;  // hashed
  int shift_ = 64;               // hashed: 64 - log2(buckets)
};

}  // namespace actorrec::embedding
