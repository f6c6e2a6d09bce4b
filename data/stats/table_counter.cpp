// Per-table counting and the statistics derived from the counts.
#include "data/stats/table_counter.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string_view>

#include "base/digest.hpp"

namespace actorrec::data::stats {

namespace {

constexpr uint32_t kSaturated = std::numeric_limits<uint32_t>::max();

// A bag's identity for deduplication. A single id is its own key (exact);
// longer bags are an XXH3 of their ids with bit 63 set, and the empty bag a
// constant, so the three kinds never collide with one another.
uint64_t BagKey(std::span<const RowId> bag) {
  if (bag.size() == 1) return bag[0];
  if (bag.empty()) return uint64_t{1} << 62;
  const std::string_view bytes(reinterpret_cast<const char*>(bag.data()), bag.size_bytes());
  return Digest64(bytes) | (uint64_t{1} << 63);
}

// k = ceil(f * n), computed so that 0.01 * 100000 gives exactly 1000.
uint64_t TopK(double fraction, uint64_t n) {
  return static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(n) - 1e-9));
}

}  // namespace

TableCounter::TableCounter(uint64_t rows) : rows_(rows), counts_(rows, 0), batch_counts_(rows, 0) {}

void TableCounter::AddBag(std::span<const RowId> bag) {
  ++bags_;
  accesses_ += bag.size();
  for (RowId row : bag) {
    if (counts_[row] == kSaturated) {
      ++overflow_[row];
    } else {
      ++counts_[row];
    }
    if (batch_rows_.Insert(row)) ++batch_counts_[row];
  }
  batch_bags_.Insert(BagKey(bag));
}

void TableCounter::EndBatch(double expected_unique_bags) {
  ++batches_;
  unique_rows_ += batch_rows_.size();
  unique_bags_ += batch_bags_.size();
  expected_unique_bags_ += expected_unique_bags;
  batch_rows_.NextBatch();
  batch_bags_.NextBatch();
}

uint64_t TableCounter::Count(RowId row) const {
  const uint64_t c = counts_[row];
  if (c != kSaturated) return c;
  const auto it = overflow_.find(row);
  return it == overflow_.end() ? c : c + it->second;
}

uint64_t TableCounter::TopSum(const std::vector<uint32_t>& sorted, const std::vector<uint64_t>& saturated,
                              uint64_t k) {
  uint64_t sum = 0;
  const uint64_t from_saturated = std::min<uint64_t>(k, saturated.size());
  for (uint64_t i = 0; i < from_saturated; ++i) sum += saturated[i];
  const uint64_t from_sorted = std::min<uint64_t>(k - from_saturated, sorted.size());
  for (uint64_t i = 0; i < from_sorted; ++i) sum += sorted[i];
  return sum;
}

double TableCounter::CacheHitRate(uint64_t k, const std::vector<uint32_t>& sorted,
                                  const std::vector<uint64_t>& saturated) const {
  if (unique_rows_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const uint64_t distinct = sorted.size() + saturated.size();
  if (k >= distinct) return 1.0;
  if (k == 0) return 0.0;
  // The k-th largest count, and how many rows at exactly that count the
  // cache still takes after all rows above it.
  const uint64_t threshold = k <= saturated.size() ? saturated[k - 1] : sorted[k - 1 - saturated.size()];
  uint64_t above = 0;
  for (uint64_t c : saturated) above += c > threshold;
  for (uint32_t c : sorted) {
    if (c <= threshold) break;
    ++above;
  }
  uint64_t ties_left = k - above;
  uint64_t hits = 0;
  for (uint64_t row = 0; row < rows_; ++row) {
    const uint64_t c = Count(static_cast<RowId>(row));
    if (c > threshold) {
      hits += batch_counts_[row];
    } else if (c == threshold && ties_left > 0) {
      hits += batch_counts_[row];
      --ties_left;
    }
  }
  return static_cast<double>(hits) / static_cast<double>(unique_rows_);
}

TableStats TableCounter::Finish(const StatsOptions& options) const {
  TableStats s;
  s.rows = rows_;
  s.accesses = accesses_;
  s.bags = bags_;
  s.mean_bag_length = bags_ ? static_cast<double>(accesses_) / static_cast<double>(bags_) : 0.0;

  // Non-zero counts in descending order, the saturated ones exact and apart.
  std::vector<uint32_t> sorted;
  std::vector<uint64_t> saturated;
  for (uint64_t row = 0; row < rows_; ++row) {
    const uint32_t c = counts_[row];
    if (c == kSaturated) {
      saturated.push_back(Count(static_cast<RowId>(row)));
    } else if (c > 0) {
      sorted.push_back(c);
    }
  }
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::sort(saturated.begin(), saturated.end(), std::greater<>());
  s.distinct_rows = sorted.size() + saturated.size();

  const double accesses = static_cast<double>(accesses_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double f : options.top_fractions) {
    const double of_rows = static_cast<double>(TopSum(sorted, saturated, TopK(f, rows_)));
    const double of_seen = static_cast<double>(TopSum(sorted, saturated, TopK(f, s.distinct_rows)));
    s.top_share_of_rows.push_back(accesses_ ? of_rows / accesses : nan);
    s.top_share_of_seen.push_back(accesses_ ? of_seen / accesses : nan);
  }
  s.mean_unique_rows_per_batch = batches_ ? static_cast<double>(unique_rows_) / static_cast<double>(batches_) : 0.0;
  s.coalescing_ratio = accesses_ ? static_cast<double>(unique_rows_) / accesses : nan;
  s.dedupe_factor = unique_bags_ ? static_cast<double>(bags_) / static_cast<double>(unique_bags_) : nan;
  s.dedupe_factor_model = expected_unique_bags_ > 0 ? static_cast<double>(bags_) / expected_unique_bags_ : nan;
  for (double f : options.cache_fractions) s.cache_hit_rate.push_back(CacheHitRate(TopK(f, rows_), sorted, saturated));
  return s;
}

}  // namespace actorrec::data::stats
