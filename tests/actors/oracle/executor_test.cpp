// The executor is not vacuous: each way of breaking a correct plan that the
// proof relies on catching is caught, by the set checks and, with those
// off, by the simulation of caches, syncs and write-backs alone.
#include <catch2/catch.hpp>

#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

struct Case {
  PlannerOptions options;
  Workload workload;
  Plans plans;
};

Case Correct(uint32_t trainers, uint32_t lookahead) {
  Case c;
  c.options.trainers = trainers;
  c.options.table_rows = {30, 500};
  c.options.lookahead = lookahead;
  c.options.partitions = OnePartition(2, 4096);
  c.workload = MakeWorkload(7, Skew::kZipf12, 40, 16, c.options.table_rows);
  Result<Plans> plans = PlanAll(c.options, c.workload);
  REQUIRE(plans.ok());
  c.plans = std::move(*plans);
  for (bool lazy : {false, true}) {
    REQUIRE(Violations(ExecutorFor(c.options, lookahead, lazy), c.workload, c.plans) == "");
  }
  return c;
}

std::string Run(const Case& c, bool lazy, bool check_sets) {
  ExecutorOptions e = ExecutorFor(c.options, c.options.lookahead, lazy);
  e.check_sets = check_sets;
  e.exact_occupancy = check_sets;  // a mutated plan's occupancy is off too; the dynamic checks alone here
  return Violations(e, c.workload, c.plans);
}

// The first batch >= from that `has`.
template <class F>
size_t FindBatch(const Plans& plans, size_t from, F has) {
  for (size_t b = from; b < plans.size(); ++b) {
    if (has(plans[b][0])) return b;
  }
  FAIL("no batch has what the mutation needs");
  return 0;
}

}  // namespace

TEST_CASE("the executor catches a critical row demoted to delayed", "[oracle]") {
  Case c = Correct(2, 3);
  const size_t b = FindBatch(c.plans, 1, [](const TrainerPlan& p) { return !p.critical.empty(); });
  for (auto& p : c.plans[b]) {
    p.delayed.push_back(p.critical.back());
    p.critical.pop_back();
  }
  REQUIRE_THAT(Run(c, /*lazy=*/true, true), Catch::Contains("critical rows are not exactly"));
  // The late sync makes batch b + 1 read the row one version behind.
  REQUIRE_THAT(Run(c, /*lazy=*/true, false), Catch::Contains("at version"));
}

TEST_CASE("the executor catches a prefetch into a slot that is still live", "[oracle]") {
  Case c = Correct(1, 4);
  // Batch b's first prefetch lands in the slot of a row batch b − 1 uses.
  const size_t b = FindBatch(c.plans, 6, [](const TrainerPlan& p) { return !p.prefetch.empty(); });
  c.plans[b][0].prefetch[0].slot = c.plans[b - 1][0].features[0].unique_slots[0];
  REQUIRE_THAT(Run(c, false, false), Catch::Contains("(live)"));
}

TEST_CASE("the executor catches a slot reused before its write-back", "[oracle]") {
  Case c = Correct(1, 4);
  // A prefetch of b into a slot freed after b − L: the barrier of b only
  // covers write-backs of batches <= b − L − 1.
  const size_t b = FindBatch(c.plans, 10, [&](const TrainerPlan& p) {
    return !p.prefetch.empty() && !c.plans[p.batch - 4][0].evictions.empty();
  });
  c.plans[b][0].prefetch[0].slot = c.plans[b - 4][0].evictions[0].slot;
  // Eager: b's prefetch lands before b − L has even run; lazy: after it ran,
  // while its write-back is still pending.
  REQUIRE_THAT(Run(c, /*lazy=*/false, false), Catch::Contains("still holds") && Catch::Contains("(live)"));
  REQUIRE_THAT(Run(c, /*lazy=*/true, false), Catch::Contains("awaiting its sync or write-back"));
}

TEST_CASE("the executor catches a missing eviction", "[oracle]") {
  Case c = Correct(2, 2);
  const size_t b = FindBatch(c.plans, 1, [](const TrainerPlan& p) { return !p.evictions.empty(); });
  for (auto& p : c.plans[b]) p.evictions.clear();
  REQUIRE_THAT(Run(c, false, true), Catch::Contains("evictions are not exactly"));
  REQUIRE_THAT(Run(c, false, false), Catch::Contains("though the window does not use it"));
}

TEST_CASE("the executor catches a wrong barrier", "[oracle]") {
  Case c = Correct(2, 2);
  for (auto& p : c.plans[5]) p.barrier = 3;
  REQUIRE_THAT(Run(c, false, true), Catch::Contains("barrier 3"));
}

TEST_CASE("the executor catches a private row that another trainer also uses", "[oracle]") {
  Case c = Correct(2, 2);
  const size_t b = FindBatch(c.plans, 0, [](const TrainerPlan& p) { return !p.critical.empty(); });
  for (auto& p : c.plans[b]) {
    p.private_rows.push_back(p.critical.back());
    p.critical.pop_back();
  }
  REQUIRE_THAT(Run(c, false, true), Catch::Contains("used by another trainer or again"));
}

TEST_CASE("the executor catches an update that never reaches the store", "[oracle]") {
  Case c = Correct(2, 2);
  // Every write-back of the last batch goes to a trainer that is not its
  // writer... by naming a writer that does not exist.
  for (auto& p : c.plans.back()) {
    for (auto& e : p.evictions) e.writer = 7;
  }
  REQUIRE_THAT(Run(c, false, false), Catch::Contains("in the store"));
}
