// A deterministic simulation of a cluster replaying the oracle's plans:
// W trainers and H shard hosts, each with a full-duplex link of the
// profile's bandwidth and latency, trainers computing each batch in a fixed
// time. It gives every batch's timeline (fetch, compute, critical sync,
// delayed sync, write-back), the iteration time and where time goes, for
// clusters larger than the machine it runs on.
//
// The rules (docs/planner.md states them with the cost model's terms):
//  - each link direction serves its transfers one after another, in the
//    order the run issues them: per batch b, (1) the prefetch of the next
//    batch that is fetched ahead (b + 1 when the plans look ahead, else b
//    itself), split evenly over the shard hosts; (2) compute; (3) the
//    critical sync (dense gradients + critical rows, one collective over
//    every trainer's link, started when every trainer has computed b);
//    (4) the write-backs of b, each trainer to every shard host, after the
//    critical sync;
//  - the delayed sync of b is background work (SimOptions::delayed_yields;
//    else it follows b's critical sync at once): it runs only while every
//    trainer link is idle, from the end of b's critical sync, and yields to
//    every other transfer (the next critical sync first), resuming after
//    it; batch b + 2 may read its rows, so b + 2 computes only once it has
//    ended (then it runs at once, holding the links);
//  - a prefetch may start only once every write-back of the batches up to
//    the plan's barrier is acknowledged (the consistency rule);
//  - a trainer computes batch b once its rows for b have landed and batch
//    b − 1's critical sync has ended.
// Transfers take bytes / bandwidth on their link(s) and arrive one latency
// later; a collective takes AllReduceSeconds of the workload's collective.
// Nothing is random: the same trace gives the same timeline.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/trainer_plan.hpp"
#include "planner/cost_model.hpp"
#include "planner/hardware_profile.hpp"

namespace actorrec::planner {

// One batch of a plan trace.
struct BatchTrace {
  std::vector<uint64_t> fetch;       // rows each trainer lands (shared + its private prefetches)
  std::vector<uint64_t> write_back;  // rows each trainer writes back after the batch
  uint64_t critical = 0;             // rows synced before the next batch
  uint64_t delayed = 0;              // rows synced in the background
  int64_t barrier = -1;              // the prefetch waits for every write-back of batches <= barrier
  bool ahead = false;                // fetched during the previous batch (lookahead plans)
};

// The trace of one plan of W trainers (BatchPlan::ForTrainer's rules).
BatchTrace TraceOf(const oracle::BatchPlan& plan);

struct SimOptions {
  double compute_s = 0;  // one trainer's compute of one batch
  // true: the delayed sync yields to every other transfer (the rules above);
  // false: it runs as the sync_scheduler actor runs it today, in arrival
  // order right after its batch's critical sync, holding the trainers'
  // links until it ends (actors/sync/sync_scheduler_actor.hpp).
  bool delayed_yields = true;
};

// Times of one batch (seconds from the start).
struct BatchTimes {
  double fetch_done = 0;       // the last trainer's rows landed
  double compute_start = 0;    // the last trainer to start
  double compute_end = 0;      // the last trainer to end
  double critical_end = 0;     // the step ends: the next batch may compute
  double delayed_end = 0;     // the delayed sync's end (the critical end when there is none)
  double write_back_ack = 0;   // every write-back of the batch acknowledged
};

struct SimResult {
  std::vector<BatchTimes> batches;
  double makespan = 0;             // the last batch's critical sync end
  // Mean per batch after the first (the first batch's fetch is a cold
  // start): the step time, and where each trainer's time went.
  double iteration_s = 0;
  double compute_s = 0;
  double fetch_wait_s = 0;         // between the previous step's end and compute (rows not there yet,
                                   // or the delayed sync of b − 2 not ended)
  double sync_wait_s = 0;          // between compute's end and the critical sync's end
};

// `work` gives W (trainers), H (shard_hosts), row bytes, sync bytes and the
// dense bytes; every trace batch must have W entries in fetch and
// write_back (a trace of another W is a caller bug: asserted).
SimResult Simulate(const std::vector<BatchTrace>& trace, const Workload& work, const HardwareProfile& hw,
                   const SimOptions& options);

}  // namespace actorrec::planner
