// The cost model on cases computed by hand (docs/planner.md's equations):
// round rates, two trainers, one shard host, the chain collective (a sum of
// x bytes over W ranks: 2 x / bw + 2 (W - 1) latency).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "planner/cost_model.hpp"
#include "tests/planner/round_figures.hpp"

using namespace actorrec::planner;
using actorrec::planner::testing::Slow;
using actorrec::planner::testing::Two;

namespace {

PlanRows Rows() {
  PlanRows r;
  r.fetched = 100;
  r.critical = 50;
  r.delayed = 30;
  r.evictions = 80;
  r.unique = 120;
  return r;
}

}  // namespace

TEST_CASE("the cost model's terms of one iteration, by hand", "[planner]") {
  const Terms t = TermsOf(Two(), Rows(), Slow());
  // 50 × 1e6 / 1e9 + 3 × 50 × 10 × 8 / 1e9
  CHECK(t.compute_s == Approx(0.050012));
  // the chain over 2: 2 × bytes / 1e6 + 2 × 1 ms
  CHECK(t.dense_sync_s == Approx(2000 / 1e6 + 0.002));
  // dense and critical rows in one collective: (1000 + 50 × 12) bytes take
  // 0.0032 + 0.002, of which the dense alone 0.004
  CHECK(t.critical_sync_s == Approx(0.0052 - 0.004));
  CHECK(t.delayed_sync_s == Approx(720 / 1e6 + 0.002));
  // the shard host's link carries all 100 fetched rows (1600 bytes), more
  // than a trainer's 50: 1600 / 1e6 + 1 ms
  CHECK(t.fetch_s == Approx(0.0026));
  CHECK(t.write_back_s == Approx(1280 / 1e6 + 0.001));
}

TEST_CASE("the cost model puts no_cache's fetches on the critical path and hides lrpp_delayed's", "[planner]") {
  const Prediction lazy = Predict(Mode::kLrppDelayed, Two(), Rows(), Slow());
  // The link is busy 0.0052 + 0.0026 + 0.00272 s, less than C + critical
  // sync: nothing but the critical sync shows.
  CHECK(lazy.compute_s == Approx(0.050012));
  CHECK(lazy.exposed_fetch_s == Approx(0.0));
  CHECK(lazy.exposed_sync_s == Approx(0.0052));
  CHECK(lazy.iteration_s == Approx(0.055212));
  CHECK(lazy.critical_bytes == Approx(3200));          // 2 × (1000 + 50 × 12): the chain sends twice
  CHECK(lazy.background_bytes == Approx(720 + 1440));  // delayed sync + (100 + 80) / 2 rows of 16 bytes
  CHECK(lazy.Dominant() == "compute");
  CHECK(lazy.samples_per_s() == Approx(100 / 0.055212));

  const Prediction none = Predict(Mode::kNoCache, Two(), Rows(), Slow());
  CHECK(none.exposed_fetch_s == Approx(0.0026 + 0.00228));
  CHECK(none.exposed_sync_s == Approx(0.0052 + 0.00272));
  CHECK(none.iteration_s == Approx(0.050012 + 0.00488 + 0.00792));
  CHECK(none.critical_bytes == Approx(3200 + 1440));
  CHECK(FetchOnCriticalPath(Mode::kStaticHot));
  CHECK_FALSE(FetchOnCriticalPath(Mode::kIdeal));
}

TEST_CASE("a link-bound lookahead mode runs at its link's busy time", "[planner]") {
  HardwareProfile hw = Slow();
  hw.network_bw = 1e4;  // 100× slower links
  const Prediction p = Predict(Mode::kLrppDelayed, Two(), Rows(), hw);
  // dense + critical 0.322 + max(fetch 0.161, write-back 0.129) + delayed
  // 0.074 = 0.557 > C + 0.322 = 0.372012
  CHECK(p.iteration_s == Approx(0.557));
  const double excess = 0.557 - 0.372012;
  CHECK(p.exposed_fetch_s == Approx(excess * 0.161 / (0.161 + 0.074)));
  CHECK(p.exposed_sync_s == Approx(0.322 + excess * 0.074 / (0.161 + 0.074)));
  CHECK(p.Dominant() == "sync");
}

TEST_CASE("the chain and the all-gather move different bytes at W = 8", "[planner]") {
  const HardwareProfile hw = Slow();
  // The chain: 2 × 1000 bytes on every link, 14 hops of 1 ms.
  CHECK(AllReduceBytes(1000, 8, Collective::kChain) == Approx(2000));
  CHECK(AllReduceSeconds(1000, 8, Collective::kChain, hw) == Approx(0.002 + 0.014));
  // NCCL's all-gather: 7 × 1000 bytes in, 7 steps.
  CHECK(AllReduceBytes(1000, 8, Collective::kAllGather) == Approx(7000));
  CHECK(AllReduceSeconds(1000, 8, Collective::kAllGather, hw) == Approx(0.007 + 0.007));
  CHECK(AllReduceSeconds(1000, 1, Collective::kAllGather, hw) == 0);
  CHECK(AllReduceSeconds(0, 8, Collective::kChain, hw) == 0);
  // Which one a config's cluster.collective gives.
  HardwareProfile gpu = hw;
  gpu.host_device_bw = 1e10;
  CHECK(CollectiveFor("nccl", hw) == Collective::kAllGather);
  CHECK(CollectiveFor("auto", gpu) == Collective::kAllGather);
  CHECK(CollectiveFor("auto", hw) == Collective::kChain);
  CHECK(CollectiveFor("tls", gpu) == Collective::kChain);
  CHECK(CollectiveFor("gloo", hw) == Collective::kChain);
}

TEST_CASE("trainers that share a host's cores with other busy threads compute slower", "[planner]") {
  CHECK(ComputeShare(2, 2, 2) == Approx(0.5));  // the testbed: 2 trainers, sampler and oracle on 2 cores
  CHECK(ComputeShare(2, 2, 1) == Approx(2.0 / 3));
  CHECK(ComputeShare(4, 2, 1) == 1);  // enough cores
  CHECK(ComputeShare(0, 8, 2) == 1);  // cores not known
  Workload half = Two();
  half.compute_share = 0.5;
  const Terms t = TermsOf(half, Rows(), Slow());
  CHECK(t.compute_s == Approx(2 * 0.050012));
  CHECK(t.fetch_s == Approx(0.0026));  // the links are not shared
  // An all-gather at W = 2: 1 × bytes, 1 step.
  Workload gather = Two();
  gather.collective = Collective::kAllGather;
  CHECK(TermsOf(gather, Rows(), Slow()).dense_sync_s == Approx(1000 / 1e6 + 0.001));
}

TEST_CASE("one trainer syncs nothing, and an accelerator adds the host-to-device copy", "[planner]") {
  Workload one = Two();
  one.trainers = 1;
  HardwareProfile hw = Slow();
  hw.host_device_bw = 1e5;
  const Terms t = TermsOf(one, Rows(), hw);
  CHECK(t.dense_sync_s == 0);
  CHECK(t.critical_sync_s == 0);
  // the trainer's link carries all 1600 bytes, then 1600 bytes at 1e5 B/s
  CHECK(t.fetch_s == Approx(0.0016 + 0.001 + 0.016));
  CHECK(t.compute_s == Approx(0.1 + 3 * 100 * 10 * 8 / 1e9));
  CHECK(kModes.size() == 6);
}

TEST_CASE("the expected largest of W normal draws, by hand where it has a closed form", "[planner]") {
  CHECK(ExpectedMaxOfNormals(0) == 0.0);
  CHECK(ExpectedMaxOfNormals(1) == 0.0);
  // E[max(X1, X2)] = 1/√π; E[max(X1, X2, X3)] = 3/(2√π); W = 8 from tables.
  CHECK(ExpectedMaxOfNormals(2) == Approx(1 / std::sqrt(M_PI)).epsilon(1e-7));
  CHECK(ExpectedMaxOfNormals(3) == Approx(1.5 / std::sqrt(M_PI)).epsilon(1e-7));
  CHECK(ExpectedMaxOfNormals(8) == Approx(1.42360).epsilon(1e-5));
}

TEST_CASE("a calibrated trainer rate replaces the share of a core, and the slowest trainer is waited for",
          "[planner]") {
  HardwareProfile hw = Slow();
  hw.trainer_flops = 0.5e9;
  hw.trainer_spread = 0.2;
  Workload w = Two();
  w.compute_share = 0.25;  // measured in place: the calibrated rate holds the sharing already
  const Terms t = TermsOf(w, Rows(), hw);
  // 50 × 1e6 / 0.5e9 + 3 × 50 × 10 × 8 / 1e9, at share 1
  CHECK(t.compute_s == Approx(0.100012));
  // C × spread × E[max of 2] = 0.100012 × 0.2 / √π
  const double wait = 0.100012 * 0.2 / std::sqrt(M_PI);
  CHECK(t.straggler_s == Approx(wait));

  // lrpp: the sum (dense 0.004 + critical rows 0.0012) starts when the
  // slowest trainer arrives; the link's busy time (0.0052 + 2.6 ms of
  // fetch + 2.72 ms of delayed rows) stays below the path.
  const Prediction lazy = Predict(Mode::kLrpp, w, Rows(), hw);
  CHECK(lazy.straggler_s == Approx(wait));
  CHECK(lazy.exposed_sync_s == Approx(wait + 0.0052));
  CHECK(lazy.iteration_s == Approx(0.100012 + wait + 0.0052));

  // no_cache: everything in series, the wait included.
  const Prediction none = Predict(Mode::kNoCache, w, Rows(), hw);
  CHECK(none.iteration_s == Approx(0.100012 + wait + 0.0052 + 0.00272 + 0.0026 + 0.00228));

  // One trainer waits for no one.
  Workload one = w;
  one.trainers = 1;
  CHECK(TermsOf(one, Rows(), hw).straggler_s == 0.0);
}

TEST_CASE("the wait for the slowest trainer does not occupy the link", "[planner]") {
  // Compute of 12 µs (a huge rate) with a spread of 10: the wait is 68 µs,
  // the path 5.28 ms, the link's busy time 0.0052 + 0.0026 + 0.00272.
  HardwareProfile hw = Slow();
  hw.trainer_flops = 1e18;
  hw.trainer_spread = 10;
  const Prediction p = Predict(Mode::kLrppDelayed, Two(), Rows(), hw);
  CHECK(p.straggler_s == Approx(12e-6 * 10 / std::sqrt(M_PI)));
  CHECK(p.iteration_s == Approx(0.0052 + 0.0026 + 0.00272));
}

TEST_CASE("no_cache's rows cost the shards' processor time, at the trainers' share of a core", "[planner]") {
  HardwareProfile hw = Slow();
  hw.shard_row = 10e-6;  // 10 µs a row, on an idle core
  Workload w = Two();
  w.compute_share = 0.5;
  // The busier end: the one shard host serves all 100 fetched rows (a
  // trainer's partition lands 50) and takes all 80 written back, at half a
  // core: 100 × 10 µs / 0.5 and 80 × 10 µs / 0.5.
  const Terms t = TermsOf(w, Rows(), hw);
  CHECK(t.shard_fetch_s == Approx(0.002));
  CHECK(t.shard_write_back_s == Approx(0.0016));
  CHECK(t.compute_s == Approx(0.100024));  // 0.050012 at half a core
  const Prediction none = Predict(Mode::kNoCache, w, Rows(), hw);
  CHECK(none.exposed_fetch_s == Approx(0.0026 + 0.00228 + 0.002 + 0.0016));
  CHECK(none.exposed_sync_s == Approx(0.0052 + 0.00272));
  CHECK(none.iteration_s == Approx(0.100024 + 0.00848 + 0.00792));
  CHECK(none.critical_bytes == Approx(3200 + 1440));  // processor time moves no bytes
  // Behind compute in a lookahead mode: the iteration is what it was.
  const Prediction lazy = Predict(Mode::kLrppDelayed, w, Rows(), hw);
  CHECK(lazy.exposed_fetch_s == Approx(0.0));
  CHECK(lazy.iteration_s == Approx(0.100024 + 0.0052));

  // Two shard hosts: a trainer's partition (50 rows) and a host (50) are alike.
  Workload two_hosts = w;
  two_hosts.shard_hosts = 2;
  CHECK(TermsOf(two_hosts, Rows(), hw).shard_fetch_s == Approx(0.001));

  // Calibrated at a quarter of the idle core's rate: the same share for the
  // rows (the topology's half is in the rate, not applied again).
  hw.trainer_flops = 0.25e9;
  const Terms calibrated = TermsOf(w, Rows(), hw);
  CHECK(calibrated.shard_fetch_s == Approx(0.004));
  CHECK(calibrated.shard_write_back_s == Approx(0.0032));
  // A calibrated rate above the idle one is a whole core, not more.
  hw.trainer_flops = 2e9;
  CHECK(TermsOf(w, Rows(), hw).shard_fetch_s == Approx(0.001));
  // No shard_row_us in the profile: not counted.
  CHECK(TermsOf(w, Rows(), Slow()).shard_fetch_s == 0.0);
}
