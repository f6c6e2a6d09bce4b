// The cluster simulator on small traces whose timeline is worked out by
// hand: 2 trainers, 1 shard host, links of 1 byte/s with 0.5 s latency,
// rows of 1 byte, compute of 10 s (so an all-reduce of x bytes over the 2
// trainers takes x + 1 s: 2 (2 − 1) / 2 · x / 1 + 2 · 0.5).
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
  // 16.5; the critical sync of 3 rows takes 4 s: 20.5. Write-backs of one
  // row each, one after the other on the shard's link: [20.5, 21.5],
  // [21.5, 22.5], acknowledged at 23.
  CHECK(r.batches[0].fetch_done == Approx(6.5));
  CHECK(r.batches[0].compute_start == Approx(6.5));
  CHECK(r.batches[0].compute_end == Approx(16.5));
  CHECK(r.batches[0].critical_end == Approx(20.5));
  CHECK(r.batches[0].write_back_ack == Approx(23));
  // Batch 1: its fetch starts at 23: [23, 25] and [25, 27], land at 25.5
  // and 27.5; compute ends at 37.5, nothing to sync.
  CHECK(r.batches[1].fetch_done == Approx(27.5));
  CHECK(r.batches[1].compute_end == Approx(37.5));
  CHECK(r.batches[1].critical_end == Approx(37.5));
  CHECK(r.makespan == Approx(37.5));
  CHECK(r.iteration_s == Approx(17));    // 37.5 − 20.5
  CHECK(r.compute_s == Approx(10));
  CHECK(r.fetch_wait_s == Approx(7));    // 27.5 − 20.5
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

TEST_CASE("the simulator's delayed sync runs after the critical sync on the same links", "[planner]") {
  BatchTrace first = Batch({0, 0}, {0, 0}, 2, -1, true);
  first.delayed = 5;
  const std::vector<BatchTrace> trace = {first, Batch({0, 0}, {0, 0}, 1, -1, true)};
  const SimResult r = Simulate(trace, Two(), Unit(), SimOptions{10});
  // Batch 0: compute [0, 10], critical [10, 13], delayed [13, 19]. Batch 1:
  // compute [13, 23], its critical sync waits for nothing more: [23, 25].
  CHECK(r.batches[0].critical_end == Approx(13));
  CHECK(r.batches[0].delayed_end == Approx(19));
  CHECK(r.batches[1].critical_end == Approx(25));
  CHECK(r.sync_wait_s == Approx(2));
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
