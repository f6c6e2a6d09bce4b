// AliasTable: O(1) draws of an index in [0, n) from any distribution over a
// few tens of thousands of outcomes (Walker's alias method, built by Vose's
// algorithm, IEEE TSE 17(9), 1991). One 64-bit word per draw: its high half
// picks a column, its low half decides between the column's own index and
// its alias.
//
// 8 bytes per outcome, values implicit (the caller maps indices to values if
// it must): columns are read uniformly at random, so the whole table is hot,
// and the draw is bound by the cache level the table fits in.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace actorrec::data::gen {

class AliasTable {
 public:
  // Index i has probability weights[i] / sum(weights), to 2^-32 per column.
  // REQUIRES: 1 <= size < 2^32, weights >= 0 with a positive sum.
  explicit AliasTable(std::span<const double> weights);

  uint32_t Sample(uint64_t random) const {
    const auto i = static_cast<uint32_t>(((random >> 32) * size_) >> 32);
    const Column c = columns_[i];
    return static_cast<uint32_t>(random) < c.threshold ? i : c.alias;
  }

  size_t size() const { return columns_.size(); }
  // Column i's parts, for callers that pack values beside them.
  uint32_t threshold(size_t i) const { return columns_[i].threshold; }
  uint32_t alias(size_t i) const { return columns_[i].alias; }

 private:
  struct Column {
    uint32_t threshold;  // P(own index) within the column, times 2^32
    uint32_t alias;
  };
  uint64_t size_;
  std::vector<Column> columns_;
};

}  // namespace actorrec::data::gen
