// Planner: the oracle's functional core. Takes global batches in order and
// returns, per batch, the plans of every trainer (a BatchPlan; ForTrainer(w)
// gives trainer w's TrainerPlan, messages/plan.capnp).
//
// Usage, one thread:
//   Planner planner(options);
//   BatchPlan plan;                       // reused: planning allocates nothing
//   while (more data) {
//     while (!planner.CanPush()) { planner.PlanNext(&plan); emit(plan); }
//     BatchRows rows = planner.RecycledRows();
//     builder.Build(next batch, W, &rows);  // BatchRowsBuilder: from a KJT
//     planner.Push(std::move(rows));
//   }
//   planner.Finish();
//   while (planner.Ready()) { planner.PlanNext(&plan); emit(plan); }
//
// Batch b is planned once b+L has been pushed (or the data has ended), so
// the planner holds at most L + 1 batches, plus the probe's batches while an
// automatic L is being chosen. At the end of the data every row is evicted
// after the last batch that uses it, so every update reaches the embedding
// store. After an error Status the planner is unusable.
//
// Design decisions (the algorithm and its invariants: lookahead_core.hpp):
//  - Slots: a shared row has the same slot in every trainer's cache; the
//    private misses of a batch share a group of slots across trainers (the
//    i-th of each trainer's takes the i-th slot), so one slot index space
//    serves every cache and a batch's private misses cost
//    max_w(private misses of w) slots, not their sum.
//  - Quarantine: a slot freed after batch e is reused only by batches
//    ≥ e+L+1, whose barrier covers e's write-back; quarantined slots count
//    in the occupancy.
//  - Private rows include cached rows whose only use in b is one trainer's
//    and whose TTL is b: every cache holds them, the user updates and writes
//    them back, nobody syncs them (plan.capnp privateRows).
//  - Split by table: PlannerOptions::owned; oracles split this way merge to
//    the single oracle's plans and, probing every partition, agree on
//    auto-L (the largest L that fits all partitions, i.e. the minimum).
//  - Auto-L chooses from the first batches; a later batch may need more
//    slots. The window then ends early (LookaheadCore's flush: the batch
//    before the one that would not fit is planned with lookahead 0, barrier
//    b − 1, and evicts every cached row of every partition), and the
//    batches after it are probed and planned again from empty caches, as
//    from a checkpoint (first_batch = the next batch): the run goes on with
//    the L that fits them. lookahead_report() says where. Oracles split by
//    table end their windows at the same batch: each asks MustEndWindow()
//    and all plan the batch with end_window when one must (SplitPlanner),
//    and their probes, of every partition, choose the same next L. When
//    even L = 1 does not fit the probe's batches, L is chosen from those
//    before the first that does not fit (the window ends there); a batch
//    whose own rows do not fit fails naming the capacity it needs. With a
//    given L such a batch fails the run.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/lookahead_core.hpp"
#include "actors/oracle/plan_maker.hpp"
#include "actors/oracle/planner_options.hpp"
#include "plan/trainer_plan.hpp"
#include "base/status.hpp"

namespace actorrec::oracle {

class Planner final : public PlanMaker {
 public:
  // REQUIRES: Validate(options).ok().
  explicit Planner(PlannerOptions options);

  // Whether Push may be called: false while the window holds L + 1 unplanned
  // batches (plan one first) and after Finish.
  bool CanPush() const override;

  // Adds the next global batch. InvalidArgument when its shape or a row id
  // does not match the options. (An automatic L's probe does not fail: a
  // cache too small shows when a batch is planned, PlanNext.)
  // REQUIRES: CanPush().
  Status Push(BatchRows rows) override;

  // Marks the end of the data: the batches still held become plannable. With
  // an automatic L the probe runs on what was pushed, if it has not yet.
  Status Finish() override;

  // Whether PlanNext may be called.
  bool Ready() const override;

  // Plans the oldest unplanned batch into *plan, overwriting it and reusing
  // its capacity. InvalidArgument naming the capacity needed when a cache
  // partition runs out of slots.
  // REQUIRES: Ready().
  Status PlanNext(BatchPlan* plan) override;
  // With `end_window`, the batch ends the window whatever this planner's
  // partitions need: what oracles split by table do when another one's
  // MustEndWindow() says so. REQUIRES: Ready(); end_window only with an
  // automatic L.
  Status PlanNext(BatchPlan* plan, bool end_window);
  // Whether PlanNext would end the window at the next batch (always false
  // with a given L). REQUIRES: Ready().
  bool MustEndWindow();

  // Finished and every batch planned.
  bool Done() const override;

  // L, or 0 while an automatic L waits for its probe batches.
  uint32_t lookahead() const override { return core_ ? core_->lookahead() : 0; }
  // How L was chosen, for the log: "lookahead 12 (given)" or the probe's
  // result with its peak occupancies.
  const std::string& lookahead_report() const override { return report_; }

  // The BatchRows of the last planned batch, emptied of meaning but not of
  // capacity, for the caller to build the next batch into (a default one
  // when there is none): with it and a reused BatchPlan, steady-state
  // planning allocates nothing.
  BatchRows RecycledRows() override { return std::move(spare_); }

  // Batches planned so far.
  uint64_t planned() const { return planned_before_ + (core_ ? core_->planned() : 0); }
  // Windows ended early so far (flushes: an automatic L re-chosen after each).
  uint32_t windows_ended() const { return windows_ended_; }
  // The batch number the next PlanNext plans: first_batch + planned().
  uint64_t next_batch() const override { return options_.first_batch + planned(); }

  // The TTL of a cached row as the window shows it now, or nullopt.
  std::optional<int64_t> CachedUntil(uint32_t table, data::RowId row) const;

 private:
  Status CheckShape(const BatchRows& rows) const;
  // Chooses L from probe_ (auto-L) and starts a core at batch next_batch().
  Status RunProbe();
  // After a flush: the core is spent; its unplanned batches go back to the
  // probe, which chooses L again for the batches from next_batch() on.
  Status EndWindow();
  // Adds a part to lookahead_report(): a window's L or the end of a window.
  void Report(const std::string& part, bool window_ended);
  // Moves batches from probe_ into the core while its window has room.
  void Refill();

  PlannerOptions options_;
  std::vector<uint32_t> owned_;
  std::unique_ptr<LookaheadCore> core_;  // null until L is known
  std::deque<BatchRows> window_;         // pushed to the core, unplanned, in order
  std::deque<BatchRows> probe_;          // not yet pushed to the core
  BatchRows spare_;                      // spent, for RecycledRows
  bool finished_ = false;
  uint64_t planned_before_ = 0;  // batches planned by cores before core_
  uint32_t windows_ended_ = 0;
  std::string report_;
  std::string kept_, latest_;  // the report's first windows, and its latest (Report)
};

}  // namespace actorrec::oracle
