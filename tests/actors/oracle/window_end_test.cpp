// An automatic L that runs out of room ends its window early (a flush): with
// several cache partitions, with oracles split by table, and at a window's
// first batch; a batch whose own rows do not fit fails naming what it needs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>

#include "actors/oracle/auto_lookahead.hpp"
#include "actors/oracle/plan_stats.hpp"
#include "actors/oracle/split_planner.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

const std::vector<uint64_t> kTableRows = {40, 300, 2000, 7};

PlannerOptions Options(uint32_t trainers, bool several) {
  PlannerOptions o;
  o.trainers = trainers;
  o.table_rows = kTableRows;
  // Several: partition 0 holds tables that are not adjacent.
  o.partitions = several ? std::vector<Partition>{{{0, 2}, 1}, {{1}, 1}, {{3}, 1}} : OnePartition(4, 1);
  o.max_lookahead = 12;
  return o;
}

// Per partition, the most slots one batch needs alone, from empty caches
// with no later batch in view: what a flush at a window's first batch needs.
std::vector<uint32_t> AloneNeeds(const PlannerOptions& options, const std::deque<BatchRows>& rows) {
  std::vector<uint32_t> most(options.partitions.size(), 0);
  for (const BatchRows& r : rows) {
    const std::vector<uint32_t> peaks = PeakOccupancy(options, std::deque<BatchRows>{r}, 1);
    for (size_t p = 0; p < most.size(); ++p) most[p] = std::max(most[p], peaks[p]);
  }
  return most;
}

uint32_t WindowsEnded(const std::vector<BatchPlan>& plans) {
  PlanStats stats;
  for (const BatchPlan& p : plans) stats.Add(p);
  return stats.windows_ended();
}

}  // namespace

TEST_CASE("windows that end early keep every plan correct: one or several partitions, oracles split by table",
          "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf08, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t trainers = GENERATE(1u, 2u, 3u);
  const bool several = GENERATE(false, true);
  // How far above what the largest batch needs alone, towards what L = 1
  // needs over the whole run: 0 ends windows at nearly every batch, some
  // at a window's first batch.
  const double room = GENERATE(0.0, 0.4);
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  CAPTURE(SkewName(skew), trainers, several, room, seed);

  const Workload w = MakeWorkload(seed, skew, 60, 16, kTableRows);
  PlannerOptions options = Options(trainers, several);
  const std::deque<BatchRows> rows = AllRows(options, w);
  const std::vector<uint32_t> alone = AloneNeeds(options, rows);
  const std::vector<uint32_t> one = PeakOccupancy(options, rows, 1);
  bool must_end = false;
  for (size_t p = 0; p < alone.size(); ++p) {
    options.partitions[p].capacity = std::max(1u, alone[p] + static_cast<uint32_t>((one[p] - alone[p]) * room));
    must_end |= one[p] > options.partitions[p].capacity;
  }
  // Planned with any given L the run fails somewhere (that is the case).
  PlannerOptions given = options;
  given.lookahead = 1;
  REQUIRE(PlanAll(given, w).ok() == !must_end);

  std::string report;
  std::vector<BatchPlan> batch_plans;
  Result<Plans> plans = PlanAll(options, w, &report, &batch_plans);
  INFO(report);
  REQUIRE((plans.ok() && plans->size() == w.batches.size()));
  if (must_end) CHECK(WindowsEnded(batch_plans) > 0);
  for (size_t b = 0; b < batch_plans.size(); ++b) {
    if (batch_plans[b].lookahead == 0) CHECK(batch_plans[b].barrier == static_cast<int64_t>(b) - 1);
  }
  // The checker: every read current, every update written back, no slot
  // reused before its write-back, each partition within its slots, the sets
  // exact for each plan's own window; eager and lazy.
  CHECK(WindowViolations(options, w, *plans) == "");

  if (!several) return;
  // Split by table, one oracle per partition: they end their windows at the
  // same batches, and their plans merge to the single oracle's.
  SplitPlanner split(options, {{0}, {1}, {2}});
  std::string split_report;
  std::vector<BatchPlan> split_plans;
  REQUIRE(PlanAllWith(split, trainers, w, &split_report, &split_plans).ok());
  CHECK(split_report == report);
  CHECK(split.windows_ended() == WindowsEnded(batch_plans));
  REQUIRE(split_plans.size() == batch_plans.size());
  for (size_t b = 0; b < batch_plans.size(); ++b) {
    CAPTURE(b);
    REQUIRE(split_plans[b] == batch_plans[b]);
  }
}

TEST_CASE("split oracles end the window together though only one of them runs out of room", "[oracle]") {
  // Partition 1 (table 1) is tight, partition 0 roomy: only partition 1's
  // oracle would end its window alone, and the batch must end for both.
  const Workload w = MakeWorkload(3, Skew::kUniform, 60, 16, kTableRows);
  PlannerOptions options = Options(2, true);
  const std::deque<BatchRows> rows = AllRows(options, w);
  const std::vector<uint32_t> alone = AloneNeeds(options, rows);
  const std::vector<uint32_t> one = PeakOccupancy(options, rows, 12);
  options.partitions[0].capacity = one[0] * 2;
  options.partitions[1].capacity = alone[1];
  options.partitions[2].capacity = one[2] * 2;
  std::string report;
  std::vector<BatchPlan> whole;
  REQUIRE(PlanAll(options, w, &report, &whole).ok());
  REQUIRE(WindowsEnded(whole) > 0);
  SplitPlanner split(options, {{0}, {1, 2}});
  std::vector<BatchPlan> merged;
  REQUIRE(PlanAllWith(split, 2, w, nullptr, &merged).ok());
  REQUIRE(merged == whole);
  for (size_t b = 0; b + 1 < whole.size(); ++b) {
    if (whole[b].lookahead != 0) continue;
    // The roomy partitions' rows go too: the next batch starts from empty
    // caches, no row of it a hit.
    PlanStats next;
    next.Add(whole[b + 1]);
    CHECK(next.totals().hits == 0);
    CHECK(next.totals().unique > 0);
  }
}

TEST_CASE("a window's first batch that does not fit lookahead 1 ends its window at once", "[oracle]") {
  // The batch that needs the most alone comes first, and the cache holds
  // just that: with L = 1 its rows that batch 1 uses again would be shared,
  // a slot each, where as a flush they are private, packed over trainers.
  // So the probe fails lookahead 1 at the first batch, where the planner of
  // before stopped ("too small even for lookahead 1").
  Workload w = MakeWorkload(5, Skew::kUniform, 30, 16, kTableRows);
  PlannerOptions options = Options(3, false);
  std::vector<uint32_t> alone;
  for (const BatchRows& r : AllRows(options, w)) alone.push_back(PeakOccupancy(options, {r}, 1)[0]);
  const size_t heaviest = std::max_element(alone.begin(), alone.end()) - alone.begin();
  std::rotate(w.batches.begin(), w.batches.begin() + heaviest, w.batches.end());
  options.partitions[0].capacity = alone[heaviest];
  REQUIRE_FALSE(ChooseLookahead(options, AllRows(options, w)).ok());
  std::string report;
  std::vector<BatchPlan> batch_plans;
  Result<Plans> plans = PlanAll(options, w, &report, &batch_plans);
  INFO(report);
  REQUIRE(plans.ok());
  CHECK(batch_plans[0].lookahead == 0);
  CHECK(batch_plans[0].barrier == -1);
  CHECK_THAT(report, Catch::StartsWith("lookahead 1 (automatic: batch 0 does not fit lookahead 1") &&
                         Catch::Contains("it ends its window at once); batch 0 ended the window"));
  CHECK(WindowViolations(options, w, *plans) == "");
}

TEST_CASE("a batch whose own rows do not fit fails naming the capacity it needs, which then runs", "[oracle]") {
  const bool several = GENERATE(false, true);
  const uint32_t trainers = GENERATE(1u, 3u);
  CAPTURE(several, trainers);
  const Workload w = MakeWorkload(9, Skew::kZipf08, 40, 16, kTableRows);
  PlannerOptions options = Options(trainers, several);
  const std::vector<uint32_t> alone = AloneNeeds(options, AllRows(options, w));
  for (size_t p = 0; p < alone.size(); ++p) options.partitions[p].capacity = alone[p];
  REQUIRE(PlanAll(options, w).ok());
  options.partitions[0].capacity = alone[0] - 1;
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE_FALSE(plans.ok());
  CHECK_THAT(plans.status().message(),
             Catch::StartsWith("the cache is too small for batch ") &&
                 Catch::Contains("even with lookahead 0") &&
                 Catch::Contains("cache partition 0 (tables 0") &&
                 Catch::Contains("needs " + std::to_string(alone[0]) + " slots per trainer") &&
                 Catch::Contains("at least " + std::to_string(alone[0])));
}
