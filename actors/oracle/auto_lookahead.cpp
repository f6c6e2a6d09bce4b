// The auto-L probe: peak occupancies by replanning, and the binary search.
#include "actors/oracle/auto_lookahead.hpp"

#include "actors/oracle/lookahead_core.hpp"

namespace actorrec::oracle {

uint32_t ProbeBatches(const PlannerOptions& options) {
  return options.probe_batches != 0 ? options.probe_batches : 2 * options.max_lookahead + 2;
}

std::vector<uint32_t> PeakOccupancy(const PlannerOptions& options, const std::deque<BatchRows>& batches,
                                    uint32_t lookahead) {
  PlannerOptions all = options;
  all.owned.clear();
  LookaheadCore core(all, OwnedPartitions(all), lookahead, /*bounded=*/false);
  auto plan = [&core] {
    const Status s = core.PlanNext(nullptr, nullptr);
    ACTORREC_ASSERT(s.ok(), "unbounded planning cannot run out of slots: " + s.message());
  };
  for (const BatchRows& rows : batches) {
    if (core.WindowFull()) plan();
    core.Push(rows);
  }
  while (core.planned() < core.pushed()) plan();
  std::vector<uint32_t> peaks(all.partitions.size());
  for (size_t p = 0; p < peaks.size(); ++p) peaks[p] = core.peak(p);
  return peaks;
}

namespace {

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

}  // namespace

Result<LookaheadChoice> ChooseLookahead(const PlannerOptions& options, const std::deque<BatchRows>& batches) {
  const std::string probe = "a probe of the first " + std::to_string(batches.size()) + " batches";
  const std::vector<uint32_t> smallest = PeakOccupancy(options, batches, 1);
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
  // Largest fitting L: fits(lo) holds, fits(hi + 1) does not (or hi is the maximum).
  uint32_t lo = 1, hi = options.max_lookahead;
  std::vector<uint32_t> best = smallest;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    std::vector<uint32_t> peaks = PeakOccupancy(options, batches, mid);
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

}  // namespace actorrec::oracle
