// A planner restarted at batch k (PlannerOptions::first_batch) plans like a
// fresh one, renumbered: the resume path after a checkpoint.
#include <catch2/catch.hpp>

#include "actors/oracle/plan_dump.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

// The batches [from, end) of w as a workload of their own.
Workload Tail(const Workload& w, size_t from) {
  Workload tail;
  tail.table_rows = w.table_rows;
  tail.batches.assign(w.batches.begin() + static_cast<std::ptrdiff_t>(from), w.batches.end());
  return tail;
}

}  // namespace

TEST_CASE("a planner started at first_batch k plans batches k … n like a fresh planner, renumbered", "[oracle]") {
  const uint32_t lookahead = GENERATE(0u, 1u, 4u, 30u);  // 0: automatic
  const uint32_t trainers = GENERATE(1u, 3u);
  const bool private_rows = GENERATE(true, false);
  const uint64_t seed = GENERATE(take(3, random(1, 1000000)));
  const uint64_t k = 1 + seed % 40;
  CAPTURE(lookahead, trainers, private_rows, seed, k);

  const Workload w = MakeWorkload(seed, Skew::kZipf08, 80, 16, {50, 400, 3000});
  const Workload tail = Tail(w, k);
  PlannerOptions fresh;
  fresh.trainers = trainers;
  fresh.table_rows = w.table_rows;
  fresh.partitions = {{{0, 2}, 2000}, {{1}, 700}};
  fresh.lookahead = lookahead;
  fresh.max_lookahead = 16;
  fresh.private_rows = private_rows;
  PlannerOptions resumed = fresh;
  resumed.first_batch = k;

  std::string fresh_report, resumed_report;
  std::vector<BatchPlan> fresh_plans, resumed_plans;
  REQUIRE(PlanAll(fresh, tail, &fresh_report, &fresh_plans).ok());
  REQUIRE(PlanAll(resumed, tail, &resumed_report, &resumed_plans).ok());
  REQUIRE(resumed_report == fresh_report);
  REQUIRE(resumed_plans.size() == w.batches.size() - k);
  const int64_t first = static_cast<int64_t>(k);
  for (size_t i = 0; i < fresh_plans.size(); ++i) {
    CAPTURE(i);
    const BatchPlan& r = resumed_plans[i];
    REQUIRE(r.batch == first + static_cast<int64_t>(i));
    // Barriers never reach before k − 1: the checkpoint holds those.
    REQUIRE(r.barrier >= first - 1);
    REQUIRE(r.barrier == std::max(first - 1, r.batch - static_cast<int64_t>(r.lookahead) - 1));
    BatchPlan renumbered = fresh_plans[i];
    renumbered.batch += first;
    renumbered.barrier += first;
    REQUIRE(r == renumbered);
  }
  // And the fresh plans of the tail are correct (so the resumed ones are, up
  // to the numbering).
  REQUIRE(Violations(ExecutorFor(fresh, fresh_plans[0].lookahead, true), tail, [&] {
            Plans p;
            for (const BatchPlan& b : fresh_plans) {
              p.emplace_back();
              for (uint32_t t = 0; t < trainers; ++t) p.back().push_back(b.ForTrainer(t));
            }
            return p;
          }()) == "");
}

TEST_CASE("a resumed planner names the absolute batch when the cache runs out", "[oracle]") {
  const Workload w = MakeWorkload(11, Skew::kUniform, 30, 16, {50, 400, 3000});
  PlannerOptions options;
  options.trainers = 2;
  options.table_rows = w.table_rows;
  options.partitions = OnePartition(3, 60);
  options.lookahead = 3;
  options.first_batch = 1000;
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE_FALSE(plans.ok());
  REQUIRE_THAT(plans.status().message(), Catch::Contains("slots per trainer at batch 100"));
}

TEST_CASE("first_batch beyond 2^62 is refused", "[oracle]") {
  PlannerOptions options;
  options.table_rows = {10};
  options.partitions = OnePartition(1, 4);
  options.first_batch = uint64_t{1} << 62;
  REQUIRE_THAT(Validate(options).message(), Catch::Contains("first batch"));
}
