// SplitPlanner: oracles split by table (PlannerOptions::owned) planned side
// by side, their plans of each batch merged (MergePlans) into what a single
// oracle owning every partition plans.
//
// What the split oracles must agree on is the batch: a plan carries one
// lookahead and one barrier for every row, so when one oracle's partitions
// cannot go on with an automatic L (LookaheadCore's flush), every oracle
// ends its window at that batch. Before each batch every planner is asked
// MustEndWindow(), and all plan the batch with end_window when one says so:
// one bit per oracle and batch, what split oracle actors would exchange.
// After it each probes every partition (auto_lookahead.hpp), so they choose
// the same next L, as at the start. The single oracle does the same within
// its one core, so the merged plans equal its plans, flushes included.
//
// Thread-safety: none; one thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/oracle/plan_maker.hpp"
#include "actors/oracle/planner.hpp"

namespace actorrec::oracle {

class SplitPlanner final : public PlanMaker {
 public:
  // One Planner per entry of `owned`: the partitions that oracle plans
  // (ascending; together, each partition once, in order).
  // REQUIRES: Validate(options).ok(); options.owned empty; `owned` as said.
  SplitPlanner(const PlannerOptions& options, const std::vector<std::vector<uint32_t>>& owned);

  bool CanPush() const override { return planners_[0]->CanPush(); }
  // Every planner gets the batch (each plans its own tables of it).
  Status Push(BatchRows rows) override;
  Status Finish() override;
  bool Ready() const override { return planners_[0]->Ready(); }
  Status PlanNext(BatchPlan* plan) override;
  bool Done() const override { return planners_[0]->Done(); }
  uint64_t next_batch() const override { return planners_[0]->next_batch(); }
  uint32_t lookahead() const override { return planners_[0]->lookahead(); }
  // The planners agree on it (they probe every partition); the first's.
  const std::string& lookahead_report() const override { return planners_[0]->lookahead_report(); }
  BatchRows RecycledRows() override { return planners_[0]->RecycledRows(); }

  uint32_t windows_ended() const { return planners_[0]->windows_ended(); }

 private:
  std::vector<std::unique_ptr<Planner>> planners_;
  std::vector<BatchPlan> parts_;  // per planner, the batch's plan
};

}  // namespace actorrec::oracle
