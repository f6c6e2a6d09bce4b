// TableCounter: the running counts of one table that DatasetStats are
// computed from. Internal to ComputeStats.
//
// Access counts are uint32 per row (4 bytes a row, not 8: Criteo Kaggle's
// hottest rows see ~45 M accesses), saturating into a map for the rare row
// past 2^32 - 1 (a hot row of Criteo Terabyte, 4.4 G samples), so counts are
// exact at any length.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "data/sample_block.hpp"
#include "data/stats/batch_set.hpp"
#include "data/stats/dataset_stats.hpp"

namespace actorrec::data::stats {

class TableCounter {
 public:
  explicit TableCounter(uint64_t rows);

  // REQUIRES: every id < rows.
  void AddBag(std::span<const RowId> bag);
  // Ends the current batch; `expected_unique_bags` is the session model's
  // expectation for it (0 when there is no model).
  void EndBatch(double expected_unique_bags);

  // The table's statistics. REQUIRES: every batch ended.
  TableStats Finish(const StatsOptions& options) const;

 private:
  uint64_t Count(RowId row) const;
  // The sum of the k largest counts; `sorted` holds the non-zero counts below
  // saturation in descending order, `saturated` the exact ones above it.
  static uint64_t TopSum(const std::vector<uint32_t>& sorted, const std::vector<uint64_t>& saturated, uint64_t k);
  // The share of distinct-rows-per-batch that a cache of the k hottest rows serves.
  double CacheHitRate(uint64_t k, const std::vector<uint32_t>& sorted, const std::vector<uint64_t>& saturated) const;

  uint64_t rows_;
  std::vector<uint32_t> counts_;
  std::unordered_map<RowId, uint64_t> overflow_;  // counts past UINT32_MAX, in excess of it
  std::vector<uint32_t> batch_counts_;            // batches in which each row appeared
  BatchSet batch_rows_;
  BatchSet batch_bags_;
  uint64_t accesses_ = 0;
  uint64_t bags_ = 0;
  uint64_t batches_ = 0;
  uint64_t unique_rows_ = 0;  // summed over batches
  uint64_t unique_bags_ = 0;  // summed over batches
  double expected_unique_bags_ = 0;
};

}  // namespace actorrec::data::stats
