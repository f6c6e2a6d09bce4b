// PlanStats against counts taken directly from the trainers' plans.
#include <catch2/catch.hpp>

#include <set>

#include "actors/oracle/plan_stats.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

TEST_CASE("plan stats count what the trainers' plans hold", "[oracle]") {
  const uint32_t trainers = GENERATE(1u, 4u);
  const bool private_rows = GENERATE(true, false);
  const uint64_t seed = GENERATE(take(3, random(1, 1000000)));
  CAPTURE(trainers, private_rows, seed);
  const Workload w = MakeWorkload(seed, Skew::kZipf12, 40, 20, {40, 300, 2000});
  PlannerOptions options;
  options.trainers = trainers;
  options.table_rows = w.table_rows;
  options.partitions = OnePartition(3, 5000);
  options.lookahead = 4;
  options.private_rows = private_rows;
  std::vector<BatchPlan> batch_plans;
  Result<Plans> plans = PlanAll(options, w, nullptr, &batch_plans);
  REQUIRE(plans.ok());

  PlanStats stats(/*bytes_per_row=*/96);
  PlanStats::Totals expect;
  uint32_t peak = 0, trainer_peak = 0;
  for (size_t b = 0; b < batch_plans.size(); ++b) {
    stats.Add(batch_plans[b]);
    // Independently: the distinct rows of the trainers' features are the
    // batch's unique rows; the misses are the union of the prefetches.
    std::set<std::pair<uint32_t, uint64_t>> unique, missed;
    for (uint32_t t = 0; t < w.table_rows.size(); ++t) {
      for (uint32_t v : w.batches[b].tables[t].values) unique.insert({t, v});
    }
    const TrainerPlan& p0 = (*plans)[b][0];
    for (const TrainerPlan& p : (*plans)[b]) {
      for (const RowSlot& r : p.private_prefetch) missed.insert({r.table, r.row});
      expect.private_prefetch += p.private_prefetch.size();
      expect.private_rows += p.private_rows.size();
      expect.fetched += p.prefetch.size() + p.private_prefetch.size();
    }
    for (const RowSlot& r : p0.prefetch) missed.insert({r.table, r.row});
    // Every eviction has one writer: count each once, over all trainers.
    std::set<std::pair<uint32_t, uint64_t>> evicted;
    for (const TrainerPlan& p : (*plans)[b]) {
      for (const Eviction& e : p.evictions) evicted.insert({e.table, e.row});
    }
    expect.unique += unique.size();
    expect.hits += unique.size() - missed.size();
    expect.prefetch += p0.prefetch.size();
    expect.critical += p0.critical.size();
    expect.delayed += p0.delayed.size();
    expect.evictions += evicted.size();
    // The shared slot space's occupancy, and each trainer's own (its line's).
    peak = std::max(peak, batch_plans[b].occupancy);
    for (const TrainerPlan& p : (*plans)[b]) trainer_peak = std::max(trainer_peak, p.occupancy);
    REQUIRE(stats.last().unique == unique.size());
    REQUIRE(stats.occupancy_last() == batch_plans[b].occupancy);
  }
  REQUIRE(stats.batches() == w.batches.size());
  REQUIRE(stats.totals() == expect);
  REQUIRE(stats.occupancy_peak() == peak);
  REQUIRE(stats.trainer_occupancy_peak() == trainer_peak);
  REQUIRE(stats.windows_ended() == 0);
  if (!private_rows) REQUIRE(stats.totals().private_rows == 0);
  REQUIRE(stats.HitShare() > 0.2);  // Zipf 1.2 over small tables: much reuse
  REQUIRE(stats.HitShare() < 1.0);
  // Everything used is eventually written back, once.
  REQUIRE(stats.totals().evictions == stats.totals().prefetch + stats.totals().private_prefetch);

  const std::string json = stats.ToJson();
  REQUIRE_THAT(json, Catch::StartsWith("{\"batches\":40,\"occupancy_last\":"));
  REQUIRE_THAT(json, Catch::Contains("\"unique_rows\":" + std::to_string(expect.unique) + ","));
  REQUIRE_THAT(json, Catch::Contains("\"critical_bytes\":" + std::to_string(96 * expect.critical) + ","));
  REQUIRE_THAT(json, Catch::Contains("\"eviction_bytes\":" + std::to_string(96 * expect.evictions) + ","));
  REQUIRE_THAT(json, Catch::EndsWith("\"trainer_occupancy_peak\":" + std::to_string(trainer_peak) +
                                     ",\"lookahead_last\":" + std::to_string(batch_plans.back().lookahead) +
                                     ",\"windows_ended\":0}"));
  REQUIRE(json.find('\n') == std::string::npos);
  REQUIRE_THAT(stats.Summary(), Catch::StartsWith("40 batches: "));
}

TEST_CASE("plan stats before any batch are zeros, not NaNs", "[oracle]") {
  PlanStats stats;
  REQUIRE(stats.HitShare() == 0.0);
  REQUIRE(stats.PerBatch(10) == 0.0);
  REQUIRE_THAT(stats.ToJson(), Catch::Contains("\"hit_share\":0.000000,"));
  REQUIRE(stats.ToJson().find("nan") == std::string::npos);
  REQUIRE_THAT(stats.Summary(), Catch::StartsWith("0 batches: 0.0 unique rows/batch, 0.0 % from the cache"));
}
