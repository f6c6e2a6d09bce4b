// Encoding and decoding of TrainerPlan messages (messages/plan.capnp): the
// only code that touches the generated TrainerPlan accessors.
#pragma once

#include "plan/trainer_plan.hpp"
#include "base/status.hpp"
#include "messages/kinds.hpp"

namespace actorrec::wire {

Frame<TrainerPlan> EncodePlan(const oracle::TrainerPlan& plan);

// Reads a TrainerPlan frame into `out`. Checks what a trainer relies on:
// lookahead >= 1 and b − L − 1 <= barrier <= b − 1 (b − L − 1 or −1 except in
// the first L batches of a resumed run, see PlannerOptions::first_batch), row ids
// below 2^32, features in strictly ascending table order, each with offsets
// that start at 0, never decrease and end at the inverse's length, the same
// sample count in every table, and every inverse entry naming one of its
// unique slots. Not checked: slots against the cache size (the trainer knows
// it) and the sync sets' consistency with each other (the oracle's tests
// prove that). A frame that fails is Corruption naming the batch, the
// trainer and the field.
Status DecodePlan(const Frame<TrainerPlan>& frame, oracle::TrainerPlan* out);

}  // namespace actorrec::wire
