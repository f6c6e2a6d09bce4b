// An independent executor of oracle plans, for the proof that they are
// right (issue item 6). It knows nothing of the planner: it models W caches
// (slot -> row, version, state) and a versioned embedding store, runs the
// plans in order on the true batches, and reports every violation of the
// consistency rule it sees.
//
// Every batch updates every row it touches (version + 1). Private rows are
// updated in their owner's cache at once; shared rows reach every cache
// through their sync. Two schedules stress opposite ends of what the plans
// allow:
//  - eager: after batch b runs, its critical and delayed syncs, its write-
//    backs, then every prefetch whose barrier is b lands at once (L batches
//    before it is used);
//  - lazy: delayed syncs of b wait until b+1 has run (just before b+1's
//    critical sync), and the write-backs of b, and so the prefetches whose
//    barrier is b, wait with them; unless b+1's own barrier is b (a window
//    ended early), which has them done before b+1 runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan/trainer_plan.hpp"
#include "data/sample_block.hpp"

namespace actorrec::oracle::testing {

struct ExecutorOptions {
  uint32_t trainers = 1;
  uint32_t lookahead = 1;
  // true: each batch's window is its plans' own lookahead (an automatic L
  // lowered mid-run), and `lookahead` is ignored. A row is then cached at b
  // when every plan since its previous use looked as far as b, and the
  // barrier may be later than b − L − 1, never earlier.
  bool varying_lookahead = false;
  uint32_t capacity = 0;                                   // slots of each trainer's cache
  std::vector<std::pair<uint32_t, uint32_t>> table_slots;  // per table: its partition's [first, end)
  bool lazy = false;
  // PlannerOptions::private_rows: false (replicated mode) expects no private
  // rows at all, every updated row synced.
  bool private_rows = true;
  // PlannerOptions::delayed_sync: false (lrpp, replicated) expects every
  // shared updated row critical and none delayed.
  bool delayed_sync = true;
  // false (the direct modes: resident rows stay for the whole run): rows may
  // stay cached past their last use in the window.
  bool exact_ttl = true;
  // false: only the dynamic checks (reads, slots, syncs, write-backs), so
  // that the executor's own tests can show those catch what they must.
  bool check_sets = true;
  // Each plan's occupancy is exactly its trainer's own slots in use: the
  // slots the trainer has fetched a row into and not yet seen released (a
  // slot freed after batch e is released for the first batch whose barrier
  // is >= e), counted from the plans alone.
  bool exact_occupancy = true;
};

// Runs plans[b][w] on `batches` (global batches; trainer w's slice is
// samples [w·n/W, (w+1)·n/W)). Returns the violations found, at most 20;
// empty means every read saw the latest version, every update reached the
// store, no slot was overwritten while live or before its write-back, and
// the sets (prefetch, private, critical, delayed, evictions) are exactly
// what ARCHITECTURE §3 defines.
std::vector<std::string> Execute(const ExecutorOptions& options, const std::vector<data::SampleBlock>& batches,
                                 const std::vector<std::vector<TrainerPlan>>& plans);

}  // namespace actorrec::oracle::testing
