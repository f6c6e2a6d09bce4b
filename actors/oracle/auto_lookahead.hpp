// Auto-L: the largest lookahead whose peak occupancy fits the cache, chosen
// by replanning the first batches (a probe, as Bagpipe does at start-up).
//
// Why a binary search is exact: the peak occupancy never falls when L grows.
// Per row, the slots it holds at L form intervals [first use, last use + L]
// of uses chained with gaps <= L; at a larger L the chains only merge and
// the intervals only grow. A private miss at L either stays one at the larger
// L or becomes part of such a chain, and a packed group of private slots
// shrinks by at most the rows that left it. So "fits" is monotone in L.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/planner_options.hpp"
#include "base/status.hpp"

namespace actorrec::oracle {

// Probe batches when options.probe_batches is 0.
uint32_t ProbeBatches(const PlannerOptions& options);

// The most slots each partition holds at once (index: partition) when
// `batches` are the whole data and are planned with lookahead L, capacities
// ignored. Plans every partition, whatever options.owned says.
std::vector<uint32_t> PeakOccupancy(const PlannerOptions& options, const std::deque<BatchRows>& batches,
                                    uint32_t lookahead);

struct LookaheadChoice {
  uint32_t lookahead = 0;
  std::string report;  // how it was chosen, with the peak occupancies
};

// The largest L in [1, max_lookahead] whose PeakOccupancy over `batches`
// fits every partition's capacity. When even L = 1 does not fit:
// InvalidArgument naming the capacity each partition needs; or, with
// `may_end_window` (a planner whose window ends early where a batch does not
// fit, LookaheadCore), the largest L, up to their number, that fits the
// batches before the first one L = 1 does not fit, and 1 when that is the
// first batch (it will end its window at once, or fail naming what its own
// rows need). A later batch may still need more than the probe saw.
Result<LookaheadChoice> ChooseLookahead(const PlannerOptions& options, const std::deque<BatchRows>& batches,
                                        bool may_end_window = false);

}  // namespace actorrec::oracle
