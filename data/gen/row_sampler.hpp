// RowSampler: draws a table's row ids from its access distribution.
//
// Tables up to kAliasMaxRows rows draw from an alias table over all rows,
// indexed by row id (row perm(r) weighs as rank r), so it stores no values:
// 8 bytes a row, at most 512 KiB, a few ns a draw. Larger tables draw a
// popularity rank with an O(1) method that stores nothing per row (Zipf by
// rejection-inversion, the others by inversion) and map it through the
// table's RowPermutation. Large Zipf tables split the ranks: the first
// kZipfHeadRanks come from an alias table, the rest from rejection-inversion
// started past them, each chosen with its exact share of the mass; near
// alpha = 1 that spares the log and exp of about 2 draws in 3. Both paths follow RankWeight exactly, so the
// choice is a matter of speed only; it is fixed by the row count, so the
// output for a seed never depends on anything else.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "data/gen/alias_table.hpp"
#include "data/gen/generator_options.hpp"
#include "data/gen/random.hpp"
#include "data/gen/row_permutation.hpp"
#include "data/gen/zipf_sampler.hpp"

namespace actorrec::data::gen {

// Tables up to this many rows are drawn from an alias table over all rows:
// 64 Ki rows is 512 KiB, still L2-resident while the table's column is drawn;
// larger tables would spill to L3 and build for longer than they save.
constexpr uint64_t kAliasMaxRows = uint64_t{1} << 16;

// The head of a large Zipf table: 768 KiB of alias columns and rows, which
// stays in a 1 MiB L2 while the table's column is drawn (the generator works
// one column at a time; alias columns are read uniformly at random, so the
// whole table is hot). On the Criteo preset (Zipf 1.05) 64 Ki ranks take
// 78 % of a 10 M-row table's draws and gave 2.2 M samples per CPU-second,
// against 1.3 M with 8 Ki ranks (68 %: more draws left to rejection-inversion).
constexpr uint64_t kZipfHeadRanks = uint64_t{1} << 16;
// Tables past kAliasMaxRows rows have a tail beyond the head.
static_assert(kZipfHeadRanks <= kAliasMaxRows);

// The unnormalised probability of popularity rank `rank` (0 = hottest).
// REQUIRES: rank < rows.
double RankWeight(const AccessDistribution& access, uint64_t rows, uint64_t rank);

// The number of hot rows of a kTopShare distribution: round(p * rows) in [1, rows].
uint64_t HotRows(const AccessDistribution& access, uint64_t rows);

class RowSampler {
 public:
  // REQUIRES: the options passed Validate; 1 <= rows <= 2^32.
  RowSampler(const AccessDistribution& access, uint64_t rows, uint64_t permutation_key);

  RowId Sample(Rng& rng) const {
    if (alias_) return alias_->Sample(rng.Next());
    if (!head_.empty() && rng.Uniform() < head_mass_) {
      const uint64_t random = rng.Next();
      const HeadColumn& c = head_[((random >> 32) * head_.size()) >> 32];
      return static_cast<uint32_t>(random) < c.threshold ? c.row : c.alias_row;
    }
    return static_cast<RowId>(permutation_(SampleRank(rng)));
  }

  // The row id of popularity rank `rank`.
  RowId RowOfRank(uint64_t rank) const { return static_cast<RowId>(permutation_(rank)); }

 private:
  // A rank by the O(1) methods (the large-table path; for Zipf, the tail).
  uint64_t SampleRank(Rng& rng) const;

  AccessDistribution access_;
  uint64_t rows_;
  RowPermutation permutation_;
  std::optional<AliasTable> alias_;  // small tables: all rows
  // Large Zipf tables: an alias table over the first kZipfHeadRanks ranks
  // with both outcomes' rows in the column, so that a draw is one load
  // (a separate rank-to-row array cost a second, dependent, cache miss).
  struct HeadColumn {
    uint32_t threshold;
    RowId row;
    RowId alias_row;
  };
  std::vector<HeadColumn> head_;
  std::optional<ZipfSampler> tail_;  // large Zipf tables: the other ranks
  double head_mass_ = 0;
  uint64_t hot_rows_ = 0;  // kTopShare
  double exp_span_ = 0;    // kExponential: 1 - exp(-lambda)
};

}  // namespace actorrec::data::gen
