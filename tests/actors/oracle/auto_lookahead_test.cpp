// Auto-L: the largest lookahead that fits, and a clear error when none does.
#include <catch2/catch.hpp>

#include "actors/oracle/auto_lookahead.hpp"
#include "actors/oracle/plan_stats.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

PlannerOptions Options(uint32_t capacity) {
  PlannerOptions o;
  o.trainers = 3;
  o.table_rows = {50, 400, 3000};
  o.partitions = OnePartition(3, capacity);
  o.max_lookahead = 24;
  o.probe_batches = 60;  // the whole workload: the probe sees what planning will
  return o;
}

}  // namespace

TEST_CASE("auto lookahead picks the largest L whose peak occupancy fits", "[oracle]") {
  const Skew skew = GENERATE(Skew::kZipf08, Skew::kTop1Percent90);
  const uint32_t target = GENERATE(3u, 9u);
  CAPTURE(SkewName(skew), target);
  const Workload w = MakeWorkload(11, skew, 60, 18, {50, 400, 3000});
  PlannerOptions options = Options(1);
  const std::deque<BatchRows> rows = AllRows(options, w);
  options.partitions[0].capacity = PeakOccupancy(options, rows, target)[0];

  std::string report;
  Result<Plans> plans = PlanAll(options, w, &report);
  REQUIRE(plans.ok());
  const uint32_t chosen = (*plans)[0][0].lookahead;
  CAPTURE(report);
  REQUIRE(chosen >= target);
  REQUIRE_THAT(report, Catch::Contains("lookahead " + std::to_string(chosen) + " (automatic") &&
                           Catch::Contains("a probe of the first 60 batches"));
  REQUIRE(PeakOccupancy(options, rows, chosen)[0] <= options.partitions[0].capacity);
  for (uint32_t larger = chosen + 1; larger <= options.max_lookahead; ++larger) {
    REQUIRE(PeakOccupancy(options, rows, larger)[0] > options.partitions[0].capacity);
  }
  REQUIRE(Violations(ExecutorFor(options, chosen, /*lazy=*/true), w, *plans) == "");
}

TEST_CASE("auto lookahead takes the maximum when everything fits", "[oracle]") {
  const Workload w = MakeWorkload(5, Skew::kUniform, 30, 12, {50, 400, 3000});
  PlannerOptions options = Options(100000);
  options.probe_batches = 0;  // default: 2 · 24 + 2 = 50, more than the data
  std::string report;
  Result<Plans> plans = PlanAll(options, w, &report);
  REQUIRE(plans.ok());
  REQUIRE((*plans)[0][0].lookahead == 24);
  REQUIRE_THAT(report, Catch::Contains("a probe of the first 30 batches"));
}

TEST_CASE("a cache too small for lookahead 1 fails the probe naming the capacity it needs", "[oracle]") {
  // The planner goes on from there, ending windows early
  // (window_end_test.cpp); the probe alone says what L = 1 needs.
  const Workload w = MakeWorkload(8, Skew::kZipf12, 60, 18, {50, 400, 3000});
  PlannerOptions options = Options(1);
  const std::deque<BatchRows> rows = AllRows(options, w);
  const uint32_t needed = PeakOccupancy(options, rows, 1)[0];
  options.partitions[0].capacity = needed - 1;
  Result<LookaheadChoice> plans = ChooseLookahead(options, rows);
  REQUIRE_FALSE(plans.ok());
  REQUIRE(plans.status().code() == Status::Code::kInvalidArgument);
  REQUIRE(PlanAll(options, w).ok());
  REQUIRE_THAT(plans.status().message(),
               Catch::Contains("too small even for lookahead 1") &&
                   Catch::Contains("needs " + std::to_string(needed) + " slots per trainer but has " +
                                   std::to_string(needed - 1)));
}

namespace {

// Calm batches (Zipf 1.2: much reuse), then busy ones (uniform over the
// same tables): an L chosen from the calm start needs more slots later.
Workload Surge(uint64_t seed) {
  Workload w = MakeWorkload(seed, Skew::kZipf12, 24, 18, {50, 400, 3000});
  Workload busy = MakeWorkload(seed + 100, Skew::kUniform, 36, 18, {50, 400, 3000});
  for (data::SampleBlock& b : busy.batches) w.batches.push_back(std::move(b));
  return w;
}

}  // namespace

TEST_CASE("auto lookahead ends its window early where later batches need more slots, and goes on", "[oracle]") {
  // Seeds whose calm start allows L > 1 (else there is nothing to lower).
  const auto [trainers, seed] = GENERATE(table<uint32_t, uint64_t>({{1, 1}, {1, 2}, {2, 1}, {2, 2}, {3, 2}}));
  CAPTURE(trainers, seed);
  const Workload w = Surge(seed);
  PlannerOptions options = Options(1);
  options.trainers = trainers;
  options.probe_batches = 16;  // the calm batches only
  const std::deque<BatchRows> rows = AllRows(options, w);
  // Room for L = 1 over the whole run: some L plans it.
  options.partitions[0].capacity = PeakOccupancy(options, rows, 1)[0];
  const std::deque<BatchRows> probe(rows.begin(), rows.begin() + 16);
  const Result<LookaheadChoice> first = ChooseLookahead(options, probe);
  REQUIRE(first.ok());
  // The L the calm start allows does not fit the busy batches: planned with
  // it throughout, the run fails partway (as every auto-L run did).
  REQUIRE(first->lookahead > 1);
  REQUIRE(PeakOccupancy(options, rows, first->lookahead)[0] > options.partitions[0].capacity);
  PlannerOptions given = options;
  given.lookahead = first->lookahead;
  REQUIRE_FALSE(PlanAll(given, w).ok());

  std::string report;
  std::vector<BatchPlan> batch_plans;
  Result<Plans> plans = PlanAll(options, w, &report, &batch_plans);
  INFO(report);
  REQUIRE(plans.ok());
  REQUIRE(plans->size() == w.batches.size());
  // Where the window ended: lookahead 0, barrier b − 1, and the batches
  // after it planned again from empty caches with an L that fits them.
  std::vector<size_t> ended;
  for (size_t b = 0; b < plans->size(); ++b) {
    const TrainerPlan& p = (*plans)[b][0];
    if (p.lookahead == 0) {
      ended.push_back(b);
      CHECK(p.barrier == static_cast<int64_t>(b) - 1);
    }
  }
  REQUIRE_FALSE(ended.empty());
  CHECK((*plans)[0][0].lookahead == first->lookahead);
  CHECK(ended.front() > 16u);
  CHECK_THAT(report, Catch::Contains("batch " + std::to_string(ended.front()) + " ended the window") &&
                         Catch::Contains("from batch " + std::to_string(ended.front() + 1) + ": lookahead "));
  PlanStats stats;
  for (const BatchPlan& p : batch_plans) stats.Add(p);
  CHECK(stats.windows_ended() == ended.size());
  // Every read current, every update written back, slots never reused too
  // early, the sets exact for each batch's own window: eager and lazy.
  CHECK(WindowViolations(options, w, *plans) == "");
}

TEST_CASE("the executor catches a window ended without writing back a cached row", "[oracle]") {
  // A negative control for the test above: drop one inherited eviction.
  const Workload w = Surge(1);
  PlannerOptions options = Options(1);
  options.trainers = 2;
  options.probe_batches = 16;
  options.partitions[0].capacity = PeakOccupancy(options, AllRows(options, w), 1)[0];
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE(plans.ok());
  ExecutorOptions e = ExecutorFor(options, 0, false);
  e.varying_lookahead = true;
  REQUIRE(Violations(e, w, *plans) == "");
  bool mutated = false;
  for (auto& batch : *plans) {
    if (batch[0].lookahead != 0 || batch[0].evictions.empty()) continue;
    for (TrainerPlan& p : batch) p.evictions.pop_back();  // the last: a row the batch does not use
    mutated = true;
    break;
  }
  REQUIRE(mutated);
  CHECK(Violations(e, w, *plans) != "");
}
