// SplitPlanner: the split oracles' agreement on where windows end.
#include "actors/oracle/split_planner.hpp"

#include <utility>

#include "actors/oracle/plan_merge.hpp"

namespace actorrec::oracle {

SplitPlanner::SplitPlanner(const PlannerOptions& options, const std::vector<std::vector<uint32_t>>& owned)
    : parts_(owned.size()) {
  ACTORREC_ASSERT(!owned.empty() && options.owned.empty(), "split the partitions of one oracle's options");
  for (const std::vector<uint32_t>& mine : owned) {
    PlannerOptions one = options;
    one.owned = mine;
    planners_.push_back(std::make_unique<Planner>(std::move(one)));
  }
}

Status SplitPlanner::Push(BatchRows rows) {
  for (size_t k = 0; k + 1 < planners_.size(); ++k) {
    if (Status s = planners_[k]->Push(rows); !s.ok()) return s;
  }
  return planners_.back()->Push(std::move(rows));
}

Status SplitPlanner::Finish() {
  for (auto& p : planners_) {
    if (Status s = p->Finish(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SplitPlanner::PlanNext(BatchPlan* plan) {
  bool end_window = false;
  for (auto& p : planners_) {
    ACTORREC_ASSERT(p->Ready() && p->next_batch() == next_batch(), "split planners go batch by batch together");
    end_window |= p->MustEndWindow();
  }
  for (size_t k = 0; k < planners_.size(); ++k) {
    if (Status s = planners_[k]->PlanNext(&parts_[k], end_window); !s.ok()) return s;
  }
  *plan = MergePlans(parts_);
  return Status::Ok();
}

}  // namespace actorrec::oracle
