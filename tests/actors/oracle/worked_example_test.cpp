// The worked example of the Bagpipe paper, the JSON dump of its first plan,
// and the dump over a batch source.
#include <catch2/catch.hpp>

#include <sstream>

#include "actors/oracle/plan_dump.hpp"
#include "actors/oracle/plan_json.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

// Batches {3, 9}, {3, 4}, {3, 6}, {6, 1} of one table, one trainer.
Workload Bagpipe() { return Listed(10, {{3, 9}, {3, 4}, {3, 6}, {6, 1}}); }

PlannerOptions Options(uint32_t lookahead) {
  PlannerOptions o;
  o.trainers = 1;
  o.table_rows = {10};
  o.partitions = OnePartition(1, 8);
  o.lookahead = lookahead;
  return o;
}

std::vector<data::RowId> Rows(const std::vector<RowSlot>& list) {
  std::vector<data::RowId> rows;
  for (const RowSlot& r : list) rows.push_back(r.row);
  return rows;
}

std::vector<data::RowId> Rows(const std::vector<Eviction>& list) {
  std::vector<data::RowId> rows;
  for (const Eviction& e : list) rows.push_back(e.row);
  return rows;
}

// Shared and private prefetches of one trainer together, in list order.
std::vector<data::RowId> Fetched(const TrainerPlan& p) {
  std::vector<data::RowId> rows = Rows(p.prefetch);
  for (data::RowId r : Rows(p.private_prefetch)) rows.push_back(r);
  return rows;
}

BatchRows RowsOf(const Workload& w, size_t b) {
  BatchRowsBuilder builder(w.table_rows);
  BatchRows rows;
  REQUIRE(builder.Build(w.batches[b], 1, &rows).ok());
  return rows;
}

}  // namespace

// The paper counts the current batch in its lookahead: its "lookahead 2"
// sees batches b and b+1, which is L = 1 here (ARCHITECTURE §3: b … b+L).
// Paper batch k is batch k − 1 here.
TEST_CASE("the Bagpipe example: prefetches, TTLs and evictions with the paper's lookahead of two batches",
          "[oracle]") {
  const Workload w = Bagpipe();
  Planner planner(Options(1));
  REQUIRE(planner.Push(RowsOf(w, 0)).ok());
  REQUIRE(planner.Push(RowsOf(w, 1)).ok());
  REQUIRE_FALSE(planner.CanPush());
  BatchPlan plan;

  // Paper batch 1: prefetch 3 and 9; 3 is cached until paper batch 2.
  REQUIRE(planner.PlanNext(&plan).ok());
  const TrainerPlan p0 = plan.ForTrainer(0);
  REQUIRE(Fetched(p0) == std::vector<data::RowId>{3, 9});
  REQUIRE(planner.CachedUntil(0, 3) == 1);
  REQUIRE(Rows(p0.evictions) == std::vector<data::RowId>{9});

  // Paper batch 2: 3 is a hit and its TTL becomes paper batch 3 once that
  // batch enters the window; 4 is prefetched.
  REQUIRE(planner.Push(RowsOf(w, 2)).ok());
  REQUIRE(planner.CachedUntil(0, 3) == 2);
  REQUIRE(planner.PlanNext(&plan).ok());
  const TrainerPlan p1 = plan.ForTrainer(0);
  REQUIRE(Fetched(p1) == std::vector<data::RowId>{4});
  REQUIRE(Rows(p1.evictions) == std::vector<data::RowId>{4});

  // Paper batch 3: 6 is prefetched and cached until paper batch 4; 3 is
  // evicted after this batch.
  REQUIRE(planner.Push(RowsOf(w, 3)).ok());
  REQUIRE(planner.PlanNext(&plan).ok());
  const TrainerPlan p2 = plan.ForTrainer(0);
  REQUIRE(Fetched(p2) == std::vector<data::RowId>{6});
  REQUIRE(planner.CachedUntil(0, 6) == 3);
  REQUIRE(Rows(p2.evictions) == std::vector<data::RowId>{3});
  REQUIRE_FALSE(planner.CachedUntil(0, 3).has_value());

  // Paper batch 4: 1 is prefetched; 6 is evicted after it (and 1, the end
  // of the data).
  REQUIRE(planner.Finish().ok());
  REQUIRE(planner.PlanNext(&plan).ok());
  const TrainerPlan p3 = plan.ForTrainer(0);
  REQUIRE(Fetched(p3) == std::vector<data::RowId>{1});
  REQUIRE(Rows(p3.evictions) == std::vector<data::RowId>{6, 1});
  REQUIRE(planner.Done());
}

TEST_CASE("the Bagpipe example with L = 2: the same prefetches and evictions, sync sets and slots", "[oracle]") {
  const Workload w = Bagpipe();
  const PlannerOptions options = Options(2);
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE(plans.ok());
  const Plans& p = *plans;
  // Row 3 is used by batches 0, 1 and 2: shared, in slot 0, critical while
  // the next batch reads it, private in its last batch (one trainer, not used
  // again: no sync), evicted after batch 2. 9, 4 and 1 are private misses.
  // 6 is shared (batch 3 reads it). Slots freed after batch e return at
  // batch e + 3: 9's slot 1 serves 1 in batch 3.
  CHECK(p[0][0].prefetch == std::vector<RowSlot>{{0, 3, 0}});
  CHECK(p[0][0].private_prefetch == std::vector<RowSlot>{{0, 9, 1}});
  CHECK(p[0][0].critical == std::vector<RowSlot>{{0, 3, 0}});
  CHECK(p[0][0].evictions == std::vector<Eviction>{{0, 9, 1, 0}});
  CHECK(p[1][0].private_prefetch == std::vector<RowSlot>{{0, 4, 2}});
  CHECK(p[1][0].critical == std::vector<RowSlot>{{0, 3, 0}});
  CHECK(p[1][0].evictions == std::vector<Eviction>{{0, 4, 2, 0}});
  CHECK(p[2][0].prefetch == std::vector<RowSlot>{{0, 6, 3}});
  CHECK(p[2][0].private_rows == std::vector<RowSlot>{{0, 3, 0}});
  CHECK(p[2][0].critical == std::vector<RowSlot>{{0, 6, 3}});
  CHECK(p[2][0].evictions == std::vector<Eviction>{{0, 3, 0, 0}});
  CHECK(p[3][0].private_prefetch == std::vector<RowSlot>{{0, 1, 1}});
  CHECK(p[3][0].private_rows == std::vector<RowSlot>{{0, 6, 3}, {0, 1, 1}});
  CHECK(p[3][0].evictions == std::vector<Eviction>{{0, 6, 3, 0}, {0, 1, 1, 0}});
  CHECK(p[3][0].barrier == 0);
  // Occupancy: live slots plus quarantined ones.
  CHECK(std::vector<uint32_t>{p[0][0].occupancy, p[1][0].occupancy, p[2][0].occupancy, p[3][0].occupancy} ==
        std::vector<uint32_t>{2, 3, 4, 4});
  for (bool lazy : {false, true}) REQUIRE(Violations(ExecutorFor(options, 2, lazy), w, p) == "");
}

TEST_CASE("a plan dumps as one documented JSON line", "[oracle]") {
  Result<Plans> plans = PlanAll(Options(2), Bagpipe());
  REQUIRE(plans.ok());
  REQUIRE(PlanToJson((*plans)[0][0]) ==
          R"({"batch":0,"trainer":0,"lookahead":2,"barrier":-1,"occupancy":2,"prefetch":[[0,3,0]],)"
          R"("privatePrefetch":[[0,9,1]],"features":[{"table":0,"uniqueSlots":[0,1],"inverse":[0,1],)"
          R"("offsets":[0,1,2]}],"privateRows":[[0,9,1]],"critical":[[0,3,0]],"delayed":[],)"
          R"("evictions":[[0,9,1,0]]})");
}

TEST_CASE("a plan with dedup groups dumps them after its features", "[oracle]") {
  Result<Plans> plans = PlanAll(Options(2), Bagpipe());
  REQUIRE(plans.ok());
  TrainerPlan plan = (*plans)[0][0];
  plan.bag_groups.push_back({{0, 2}, {0, 1, 0}});
  const std::string json = PlanToJson(plan);
  CHECK_THAT(json, Catch::Contains(R"("offsets":[0,1,2]}],"bagGroups":[{"tables":[0,2],"bagOf":[0,1,0]}],)"
                                   R"("privateRows":)"));
}

TEST_CASE("the plan dump writes one line per batch and trainer for the first batches", "[oracle]") {
  const Workload w = MakeWorkload(3, Skew::kZipf08, 12, 8, {20, 100});
  PlannerOptions options;
  options.trainers = 2;
  options.table_rows = w.table_rows;
  options.partitions = OnePartition(2, 1000);
  options.max_lookahead = 4;
  size_t next = 0;
  BatchSource source = [&](data::SampleBlock* batch) -> Result<bool> {
    if (next == w.batches.size()) return false;
    *batch = w.batches[next++];
    return true;
  };
  std::ostringstream out;
  std::string report;
  REQUIRE(DumpPlans(options, source, 5, &out, &report).ok());
  REQUIRE_THAT(report, Catch::Contains("lookahead 4 (automatic"));
  options.lookahead = 4;
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE(plans.ok());
  std::string expected;
  for (size_t b = 0; b < 5; ++b) {
    for (const TrainerPlan& p : (*plans)[b]) expected += PlanToJson(p) + "\n";
  }
  REQUIRE(out.str() == expected);
}
