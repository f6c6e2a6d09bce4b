// Oracles split by table produce, merged, exactly the single oracle's plans.
#include <catch2/catch.hpp>

#include "actors/oracle/plan_merge.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

TEST_CASE("oracles split by table merge to the single oracle's plans", "[oracle]") {
  const uint32_t lookahead = GENERATE(0u, 1u, 6u);  // 0: automatic
  const uint32_t trainers = GENERATE(1u, 4u);
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  CAPTURE(lookahead, trainers, seed);
  const Workload w = MakeWorkload(seed, Skew::kZipf08, 50, 16, {60, 500, 2500, 90});

  PlannerOptions single;
  single.trainers = trainers;
  single.table_rows = w.table_rows;
  // Partition 0 holds tables that are not adjacent; auto-L is bound by the
  // tightest partition.
  single.partitions = {{{0, 3}, 200}, {{1}, 150}, {{2}, 300}};
  single.lookahead = lookahead;
  single.max_lookahead = 12;
  single.probe_batches = 50;  // the whole run: an automatic L then fits every batch
  std::string single_report;
  std::vector<BatchPlan> whole_plans;
  Result<Plans> whole = PlanAll(single, w, &single_report, &whole_plans);
  REQUIRE(whole.ok());

  std::vector<std::vector<BatchPlan>> parts(3);
  for (uint32_t p = 0; p < 3; ++p) {
    PlannerOptions one = single;
    one.owned = {p};
    std::string report;
    REQUIRE(PlanAll(one, w, &report, &parts[p]).ok());
    REQUIRE(report == single_report);
  }
  REQUIRE(whole_plans.size() == w.batches.size());
  for (size_t b = 0; b < whole_plans.size(); ++b) {
    CAPTURE(b);
    REQUIRE(parts[0][b].occupancy > 0);
    REQUIRE(MergePlans({parts[0][b], parts[1][b], parts[2][b]}) == whole_plans[b]);
  }
  REQUIRE(Violations(ExecutorFor(single, (*whole)[0][0].lookahead, false), w, *whole) == "");
}
