// PlanToJson: a TrainerPlan as one line of JSON, the format of the plan dump
// (`actorrec plan`, docs/plan_format.md). A debugging and tooling interface: fields are
// only ever added, never renamed or reordered.
//
// One object per batch and trainer, on one line, no spaces, keys in this
// order (the names are plan.capnp's):
//   "batch"            global batch b
//   "trainer"          trainer w
//   "lookahead"        L the batch was planned with
//   "barrier"          max(first_batch − 1, b − L − 1): write-backs of batches <= barrier
//                      are acknowledged before this prefetch is served
//   "occupancy"        slots held in w's own cache while b runs (quarantined
//                      slots included; not the private slots of others it
//                      leaves empty), <= the capacity
//   "prefetch"         [[table, row, slot], …] shared misses, fetched by all
//   "privatePrefetch"  [[table, row, slot], …] misses only w fetches
//   "features"         [{"table": t, "uniqueSlots": [s, …], "inverse": [u, …],
//                      "offsets": [o, …]}, …] w's slice as slots, per table:
//                      sample i reads uniqueSlots[inverse[p]],
//                      p in [offsets[i], offsets[i+1])
//   "privateRows"      [[table, row, slot], …] updated by w alone, no sync
//   "critical"         [[table, row, slot], …] shared, synced before b+1
//   "delayed"          [[table, row, slot], …] shared, synced in the background
//   "evictions"        [[table, row, slot, writer], …] freed after b;
//                      `writer` writes the row back
// Example (batch 0 of the Bagpipe example, worked_example_test.cpp; one
// line in the dump):
//   {"batch":0,"trainer":0,"lookahead":2,"barrier":-1,"occupancy":2,
//    "prefetch":[[0,3,0]],"privatePrefetch":[[0,9,1]],"features":[{"table":0,
//    "uniqueSlots":[0,1],"inverse":[0,1],"offsets":[0,1,2]}],
//    "privateRows":[[0,9,1]],"critical":[[0,3,0]],"delayed":[],
//    "evictions":[[0,9,1,0]]}
#pragma once

#include <string>

#include "plan/trainer_plan.hpp"

namespace actorrec::oracle {

// The plan as one JSON object, without the trailing newline.
std::string PlanToJson(const TrainerPlan& plan);

}  // namespace actorrec::oracle
