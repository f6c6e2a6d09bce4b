// The cluster simulator on small traces whose timeline is worked out by
// hand: 2 trainers, 1 shard host, links of 1 byte/s with 0.5 s latency,
// rows of 1 byte, compute of 10 s (so the chain's sum of x bytes over the
// 2 trainers takes 2x + 1 s: 2 · x / 1 + 2 (2 − 1) · 0.5).
#include <catch2/catch.hpp>

#include "planner/simulator.hpp"

using namespace actorrec;
using namespace actorrec::planner;

namespace {

HardwareProfile Unit() {
  HardwareProfile hw;
  hw.gemm_flops = 1;
  hw.memory_bw = 1;
  hw.network_bw = 1;
  hw.network_latency = 0.5;
  return hw;
}

Workload Two() {
  Workload w;
  w.trainers = 2;
  w.shards = 1;
  w.shard_hosts = 1;
  w.row_bytes = 1;
  w.sync_row_bytes = 1;
  w.dense_bytes = 0;
  return w;
}

BatchTrace Batch(std::vector<uint64_t> fetch, std::vector<uint64_t> write_back, uint64_t critical, int64_t barrier,
                 bool ahead) {
  BatchTrace t;
  t.fetch = std::move(fetch);
  t.write_back = std::move(write_back);
  t.critical = critical;
  t.barrier = barrier;
  t.ahead = ahead;
  return t;
}

}  // namespace

TEST_CASE("the simulator puts a fetch that waits for the previous write-backs on the critical path", "[planner]") {
  // no_cache-like: batch 1's fetch waits for batch 0's write-backs.
  const std::vector<BatchTrace> trace = {Batch({2, 4}, {1, 1}, 3, -1, false), Batch({2, 2}, {0, 0}, 0, 0, false)};
  const SimResult r = Simulate(trace, Two(), Unit(), SimOptions{10});
  REQUIRE(r.batches.size() == 2);
  // Batch 0: trainer 0's 2 rows [0, 2] land at 2.5; trainer 1's 4 rows wait
  // for the shard's link: [2, 6], land at 6.5. Compute ends at 12.5 and
  // 16.5; the critical sync of 3 rows takes 7 s: 23.5. Write-backs of one
  // row each, one after the other on the shard's link: [23.5, 24.5],
  // [24.5, 25.5], acknowledged at 26.
  CHECK(r.batches[0].fetch_done == Approx(6.5));
  CHECK(r.batches[0].compute_start == Approx(6.5));
  CHECK(r.batches[0].compute_end == Approx(16.5));
  CHECK(r.batches[0].critical_end == Approx(23.5));
  CHECK(r.batches[0].write_back_ack == Approx(26));
  // Batch 1: its fetch starts at 26: [26, 28] and [28, 30], land at 28.5
  // and 30.5; compute ends at 40.5, nothing to sync.
  CHECK(r.batches[1].fetch_done == Approx(30.5));
  CHECK(r.batches[1].compute_end == Approx(40.5));
  CHECK(r.batches[1].critical_end == Approx(40.5));
  CHECK(r.makespan == Approx(40.5));
  CHECK(r.iteration_s == Approx(17));  // 40.5 − 23.5
  CHECK(r.compute_s == Approx(10));
  CHECK(r.fetch_wait_s == Approx(7));  // 30.5 − 23.5
  CHECK(r.sync_wait_s == Approx(0));
}

TEST_CASE("the simulator hides a prefetch of the next batch behind compute", "[planner]") {
  const std::vector<BatchTrace> trace = {Batch({2, 2}, {0, 0}, 0, -1, true), Batch({2, 2}, {0, 0}, 0, -1, true)};
  const SimResult r = Simulate(trace, Two(), Unit(), SimOptions{10});
  // Batch 0's rows: [0, 2] and [2, 4]; batch 1's, fetched during batch 0:
  // [4, 6] and [6, 8], landed by 8.5, before batch 0 ends at 14.5.
  CHECK(r.batches[0].fetch_done == Approx(4.5));
  CHECK(r.batches[0].critical_end == Approx(14.5));
  CHECK(r.batches[1].fetch_done == Approx(8.5));
  CHECK(r.batches[1].compute_start == Approx(14.5));
  CHECK(r.batches[1].critical_end == Approx(24.5));
  CHECK(r.iteration_s == Approx(10));  // compute alone
  CHECK(r.fetch_wait_s == Approx(0));
}

// Three batches, nothing fetched: batch 0 syncs 2 critical and 5 delayed
// rows, batch 1 one critical row, batch 2 nothing.
static std::vector<BatchTrace> DelayedTrace() {
  BatchTrace first = Batch({0, 0}, {0, 0}, 2, -1, true);
  first.delayed = 5;
  return {first, Batch({0, 0}, {0, 0}, 1, -1, true), Batch({0, 0}, {0, 0}, 0, -1, true)};
}

TEST_CASE("the simulator's delayed sync yields to the next critical sync", "[planner]") {
  const SimResult r = Simulate(DelayedTrace(), Two(), Unit(), SimOptions{10});
  // Batch 0: compute [0, 10], critical sync of 2 rows [10, 15]; its
  // delayed sync (5 rows: 11 s) runs from 15 while batch 1 computes
  // [15, 25], 10 s of it. Batch 1's critical sync (1 row: 3 s) goes first,
  // [25, 28], where first come first served would have started it at 26.
  CHECK(r.batches[0].critical_end == Approx(15));
  CHECK(r.batches[1].compute_start == Approx(15));
  CHECK(r.batches[1].critical_end == Approx(28));
  // The last second of the delayed sync runs after it, [28, 29]: batch 2
  // may read its rows, so it computes from 29, not 28.
  CHECK(r.batches[0].delayed_end == Approx(29));
  CHECK(r.batches[2].compute_start == Approx(29));
  CHECK(r.batches[2].critical_end == Approx(39));
  CHECK(r.batches[1].delayed_end == Approx(28));  // none: its critical end
  CHECK(r.iteration_s == Approx(12));              // (39 − 15) / 2
  CHECK(r.sync_wait_s == Approx(1.5));             // (3 + 0) / 2
  CHECK(r.fetch_wait_s == Approx(0.5));            // (0 + 1) / 2: batch 2 waits for the delayed sync
}

TEST_CASE("the simulator's delayed sync in arrival order holds the links until it ends", "[planner]") {
  // The trace of the test above, as the sync_scheduler runs it today.
  SimOptions fifo{10};
  fifo.delayed_yields = false;
  const SimResult r = Simulate(DelayedTrace(), Two(), Unit(), fifo);
  // Delayed [15, 26]; batch 1 computes [15, 25] and its critical sync
  // waits for the delayed one: [26, 29]; batch 2 computes [29, 39].
  CHECK(r.batches[0].delayed_end == Approx(26));
  CHECK(r.batches[1].critical_end == Approx(29));
  CHECK(r.batches[2].critical_end == Approx(39));
  CHECK(r.sync_wait_s == Approx(2));  // (4 + 0) / 2
  CHECK(r.fetch_wait_s == Approx(0));
}

TEST_CASE("the simulator's delayed sync that fits in the next compute costs nothing", "[planner]") {
  BatchTrace first = Batch({0, 0}, {0, 0}, 2, -1, true);
  first.delayed = 2;  // 5 s, within batch 1's 10 s of compute
  const std::vector<BatchTrace> trace = {first, Batch({0, 0}, {0, 0}, 2, -1, true)};
  const SimResult r = Simulate(trace, Two(), Unit(), SimOptions{10});
  CHECK(r.batches[0].critical_end == Approx(15));
  CHECK(r.batches[0].delayed_end == Approx(20));
  CHECK(r.batches[1].critical_end == Approx(30));  // [25, 30]: nothing waited
  CHECK(r.iteration_s == Approx(15));
}

TEST_CASE("a plan's trace counts each trainer's landings and write-backs", "[planner]") {
  oracle::BatchPlan plan;
  plan.lookahead = 5;
  plan.barrier = 4;
  plan.prefetch.resize(3);
  plan.critical.resize(2);
  plan.delayed.resize(1);
  plan.trainers.resize(2);
  plan.trainers[0].private_prefetch.resize(1);
  plan.evictions = {oracle::Eviction{0, 1, 0, 1}, oracle::Eviction{0, 2, 1, 1}};
  const BatchTrace t = TraceOf(plan);
  CHECK(t.fetch == std::vector<uint64_t>{4, 3});
  CHECK(t.write_back == std::vector<uint64_t>{1, 2});
  CHECK(t.critical == 2);
  CHECK(t.delayed == 1);
  CHECK(t.barrier == 4);
  CHECK(t.ahead);
}
