// PlanStats: what the oracle's plans say about the cache, accumulated over
// batches, for the oracle actor to publish and `actorrec plan` to print.
//
// Everything is read off the BatchPlans, so the figures are the plans'
// (logical) traffic, not measured traffic:
//  - unique rows of a batch: its shared rows (critical + delayed: every
//    shared row of a batch is updated by it) plus every trainer's private
//    rows; each distinct (table, row) counts once however many trainers
//    touch it;
//  - misses: shared prefetches plus every trainer's private prefetches;
//    hits (rows served from the cache) are unique − misses;
//  - evictions: the shared list plus every private prefetch (freed after
//    the batch that fetched it); each is one write-back;
//  - bytes are rows × bytes_per_row, the row state that travels (vector and
//    optimizer slots). A shared prefetch is one row of the plan but is
//    fetched by every trainer: fetched_bytes counts it W times.
// Split-by-table oracles each see their partitions' rows only; their stats
// add up to the single oracle's, occupancies excepted (each is its own
// partitions' occupancy).
//
// Thread-safety: none; the owner adds and reads from one thread.
#pragma once

#include <cstdint>
#include <string>

#include "plan/trainer_plan.hpp"

namespace actorrec::oracle {

class PlanStats {
 public:
  // bytes_per_row: bytes of one row's state (0: byte figures stay 0).
  // direct: the plans of a DirectPlanner (no_cache, static_hot, ideal),
  // whose lookahead 0 is their rule, not a window that ended early.
  explicit PlanStats(uint64_t bytes_per_row = 0, bool direct = false)
      : bytes_per_row_(bytes_per_row), direct_(direct) {}

  // Adds one planned batch.
  void Add(const BatchPlan& plan);

  // Totals over the batches added (rows).
  struct Totals {
    uint64_t unique = 0;
    uint64_t hits = 0;              // unique rows already cached
    uint64_t prefetch = 0;          // shared misses (fetched by every trainer)
    uint64_t private_prefetch = 0;  // private misses, over all trainers
    uint64_t fetched = 0;           // rows landed in some cache: W × prefetch + private_prefetch
    uint64_t private_rows = 0;      // updated by one trainer, never synced
    uint64_t critical = 0;          // synced before the next batch
    uint64_t delayed = 0;           // synced in the background
    uint64_t evictions = 0;         // written back
    bool operator==(const Totals&) const = default;
  };

  uint64_t batches() const { return batches_; }
  const Totals& totals() const { return totals_; }
  // The last batch's own figures (zero before the first Add).
  const Totals& last() const { return last_; }
  // Slots in use in the index space every cache shares (BatchPlan::occupancy).
  uint32_t occupancy_last() const { return occupancy_last_; }
  uint32_t occupancy_peak() const { return occupancy_peak_; }
  // The most slots one trainer's own cache held (BatchPlan::Own::occupancy).
  uint32_t trainer_occupancy_peak() const { return trainer_occupancy_peak_; }
  // The last batch's lookahead, and the batches planned with lookahead 0 by
  // a lookahead planner: each ended its window early (an automatic L that
  // ran out of room, Planner).
  uint32_t lookahead_last() const { return lookahead_last_; }
  uint32_t windows_ended() const { return windows_ended_; }
  uint64_t bytes_per_row() const { return bytes_per_row_; }

  // Share of unique rows served from the cache (hits / unique), over every
  // batch added; 0 when no row was seen.
  double HitShare() const;
  // A total divided by the batches added; 0 before the first.
  double PerBatch(uint64_t total) const;

  // One JSON object, one line, keys in a fixed order (docs/plan_format.md):
  // batches, occupancy (last, peak), per-batch means, totals, bytes.
  std::string ToJson() const;
  // One line for a log: "12 batches: 3010.2 unique rows/batch, 81.3 % from
  // cache, …".
  std::string Summary() const;

 private:
  uint64_t bytes_per_row_;
  bool direct_;
  uint64_t batches_ = 0;
  Totals totals_, last_;
  uint32_t occupancy_last_ = 0;
  uint32_t occupancy_peak_ = 0;
  uint32_t trainer_occupancy_peak_ = 0;
  uint32_t lookahead_last_ = 0;
  uint32_t windows_ended_ = 0;
};

}  // namespace actorrec::oracle
