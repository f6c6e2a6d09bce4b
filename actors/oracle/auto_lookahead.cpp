// The auto-L probe: peak occupancies by replanning, and the binary search.
#include "actors/oracle/auto_lookahead.hpp"

#include <algorithm>
#include <utility>

#include "actors/oracle/lookahead_core.hpp"

namespace actorrec::oracle {

uint32_t ProbeBatches(const PlannerOptions& options) {
  return options.probe_batches != 0 ? options.probe_batches : 2 * options.max_lookahead + 2;
}

namespace {

// PeakOccupancy of the first `count` batches, as if they were the whole
// data; `fitting`, if given: how many batches come before the first whose
// occupancy exceeds a partition's capacity (count when none does).
std::vector<uint32_t> PrefixPeaks(const PlannerOptions& options, const std::deque<BatchRows>& batches, size_t count,
                                  uint32_t lookahead, size_t* fitting = nullptr) {
  PlannerOptions all = options;
  all.owned.clear();
  LookaheadCore core(all, OwnedPartitions(all), lookahead, /*bounded=*/false);
  if (fitting != nullptr) *fitting = count;
  auto plan = [&] {
    const Status s = core.PlanNext(nullptr, nullptr);
    ACTORREC_ASSERT(s.ok(), "unbounded planning cannot run out of slots: " + s.message());
    for (size_t p = 0; p < all.partitions.size() && fitting != nullptr; ++p) {
      if (core.in_use(p) > all.partitions[p].capacity) *fitting = std::min<size_t>(*fitting, core.planned() - 1);
    }
  };
  for (size_t i = 0; i < count; ++i) {
    if (core.WindowFull()) plan();
    core.Push(batches[i]);
  }
  while (core.planned() < core.pushed()) plan();
  std::vector<uint32_t> peaks(all.partitions.size());
  for (size_t p = 0; p < peaks.size(); ++p) peaks[p] = core.peak(p);
  return peaks;
}

bool Fits(const PlannerOptions& options, const std::vector<uint32_t>& peaks) {
  for (size_t p = 0; p < peaks.size(); ++p) {
    if (peaks[p] > options.partitions[p].capacity) return false;
  }
  return true;
}

std::string Peaks(const PlannerOptions& options, const std::vector<uint32_t>& peaks) {
  std::string s;
  for (size_t p = 0; p < peaks.size(); ++p) {
    s += (p ? ", " : "") + std::to_string(peaks[p]) + " of " + std::to_string(options.partitions[p].capacity) +
         " slots in partition " + std::to_string(p);
  }
  return s;
}

// The largest fitting L over the first `count` batches, given that L = 1
// fits them with peaks `smallest`.
LookaheadChoice Largest(const PlannerOptions& options, const std::deque<BatchRows>& batches, size_t count,
                        std::vector<uint32_t> smallest, const std::string& probe) {
  // Largest fitting L: fits(lo) holds, fits(hi + 1) does not (or hi is the maximum).
  uint32_t lo = 1, hi = options.max_lookahead;
  std::vector<uint32_t> best = std::move(smallest);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    std::vector<uint32_t> peaks = PrefixPeaks(options, batches, count, mid);
    if (Fits(options, peaks)) {
      lo = mid;
      best = std::move(peaks);
    } else {
      hi = mid - 1;
    }
  }
  LookaheadChoice choice;
  choice.lookahead = lo;
  choice.report = "lookahead " + std::to_string(lo) + " (automatic: the largest of 1 … " +
                  std::to_string(options.max_lookahead) + " whose peak occupancy fits, by " + probe + "; peak " +
                  Peaks(options, best) + ")";
  return choice;
}

}  // namespace

std::vector<uint32_t> PeakOccupancy(const PlannerOptions& options, const std::deque<BatchRows>& batches,
                                    uint32_t lookahead) {
  return PrefixPeaks(options, batches, batches.size(), lookahead);
}

Result<LookaheadChoice> ChooseLookahead(const PlannerOptions& options, const std::deque<BatchRows>& batches,
                                        bool may_end_window) {
  const std::string probe = "a probe of the first " + std::to_string(batches.size()) + " batches";
  size_t fitting = 0;
  const std::vector<uint32_t> smallest = PrefixPeaks(options, batches, batches.size(), 1, &fitting);
  if (!Fits(options, smallest) && may_end_window) {
    // The batches before the first that overflows with L = 1 fit L = 1 as
    // the whole data too: planned without the batches after them, none of
    // them holds more (rows are evicted sooner, some shared rows private).
    const std::string cut = "batch " + std::to_string(options.first_batch + fitting) +
                            " does not fit lookahead 1 (peak " + Peaks(options, smallest) + " over " + probe + ")";
    if (fitting == 0) {
      LookaheadChoice choice;
      choice.lookahead = 1;
      choice.report = "lookahead 1 (automatic: " + cut + "; it ends its window at once)";
      return choice;
    }
    // An L beyond those batches would see past where the window ends.
    PlannerOptions before = options;
    before.max_lookahead = static_cast<uint32_t>(std::min<size_t>(options.max_lookahead, fitting));
    LookaheadChoice choice = Largest(before, batches, fitting, PrefixPeaks(options, batches, fitting, 1),
                                     "a probe of the " + std::to_string(fitting) + " batches before it");
    choice.report.insert(choice.report.find("(automatic: ") + 12, cut + "; ");
    return choice;
  }
  if (!Fits(options, smallest)) {
    std::string needs;
    for (size_t p = 0; p < smallest.size(); ++p) {
      if (smallest[p] <= options.partitions[p].capacity) continue;
      needs += (needs.empty() ? "" : "; ") + std::string("cache partition ") + std::to_string(p) + " needs " +
               std::to_string(smallest[p]) + " slots per trainer but has " +
               std::to_string(options.partitions[p].capacity);
    }
    return Status::InvalidArgument("the cache is too small even for lookahead 1 (" + probe + "): " + needs);
  }
  return Largest(options, batches, batches.size(), smallest, probe);
}

}  // namespace actorrec::oracle
