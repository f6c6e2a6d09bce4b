// MergePlans: one batch's plans from the plans of oracles split by table
// (PlannerOptions::owned), equal to what a single oracle owning all their
// partitions would produce.
#pragma once

#include <vector>

#include "plan/trainer_plan.hpp"

namespace actorrec::oracle {

// `parts` are plans of the same batch, in the order of the partitions their
// oracles own (each oracle owning a run of consecutive partitions, after the
// previous one's). Lists are concatenated, features ordered by table,
// occupancies added.
// REQUIRES: parts is not empty and agrees on batch, lookahead, barrier and
// the number of trainers.
BatchPlan MergePlans(const std::vector<BatchPlan>& parts);

}  // namespace actorrec::oracle
