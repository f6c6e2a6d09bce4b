// DirectPlanner: the plans of ideal, static_hot and no_cache, run by the
// independent executor (every read current, every update in the store, no
// live slot overwritten), on random and skewed batches with many seeds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "actors/oracle/direct_planner.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

using Resident = DirectOptions::Resident;

// The rows most used in `w`, (table << 32 | row), as static_hot lists them.
std::vector<uint64_t> HotKeys(const Workload& w, size_t keep) {
  std::map<uint64_t, uint64_t> counts;
  for (const data::SampleBlock& batch : w.batches) {
    for (uint32_t t = 0; t < batch.tables.size(); ++t) {
      for (data::RowId r : batch.tables[t].values) ++counts[uint64_t{t} << 32 | r];
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranked(counts.begin(), counts.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<uint64_t> keys;
  for (size_t i = 0; i < std::min(keep, ranked.size()); ++i) keys.push_back(ranked[i].first);
  return keys;
}

DirectOptions OptionsFor(Resident resident, uint32_t trainers, const Workload& w, uint32_t staging) {
  DirectOptions o;
  o.trainers = trainers;
  o.table_rows = w.table_rows;
  o.resident = resident;
  o.staging = resident == Resident::kAll ? 0 : staging;
  if (resident == Resident::kListed) o.listed = HotKeys(w, 24);
  return o;
}

// The executor on one flat cache of o.slots() slots, every table in it;
// eager only: with no lookahead, batch b's fetch lands right after b−1 (the
// lazy schedule would land it after b). ideal's first fetches land then too
// (they may land earlier: its barrier is −1).
ExecutorOptions ExecutorOf(const DirectOptions& o) {
  ExecutorOptions e;
  e.trainers = o.trainers;
  e.lookahead = 0;
  e.capacity = static_cast<uint32_t>(o.slots());
  e.table_slots.assign(o.table_rows.size(), {0, e.capacity});
  e.check_sets = false;
  e.exact_ttl = false;
  return e;
}

Plans PlanDirect(const DirectOptions& o, const Workload& w, std::vector<BatchPlan>* batch_plans = nullptr) {
  REQUIRE(Validate(o).ok());
  DirectPlanner planner(o);
  Result<Plans> plans = PlanAllWith(planner, o.trainers, w, nullptr, batch_plans);
  REQUIRE(plans.ok());
  return std::move(plans).value();
}

}  // namespace

TEST_CASE("direct plans (ideal, static_hot, no_cache) keep every read current", "[oracle]") {
  for (Resident resident : {Resident::kNone, Resident::kListed, Resident::kAll}) {
    for (Skew skew : {Skew::kUniform, Skew::kZipf12, Skew::kTop1Percent90}) {
      for (uint32_t trainers : {1u, 2u, 3u, 4u}) {
        for (uint64_t seed = 1; seed <= 4; ++seed) {
          const Workload w = MakeWorkload(seed, skew, 30, 24, {40, 300, 7});
          const DirectOptions o = OptionsFor(resident, trainers, w, 128);
          const Plans plans = PlanDirect(o, w);
          INFO(SkewName(skew) << ", " << trainers << " trainers, seed " << seed << ", resident "
                              << static_cast<int>(resident));
          CHECK(Violations(ExecutorOf(o), w, plans) == "");
          for (size_t b = 0; b < plans.size(); ++b) {
            // ideal writes nothing back before the end: no fetch waits.
            CHECK(plans[b][0].barrier == (resident == Resident::kAll ? -1 : static_cast<int64_t>(b) - 1));
            CHECK(plans[b][0].delayed.empty());
          }
        }
      }
    }
  }
}

TEST_CASE("ideal fetches each row it uses once and evicts it after the last batch", "[oracle]") {
  const Workload w = MakeWorkload(5, Skew::kZipf08, 20, 32, {50, 200});
  const DirectOptions o = OptionsFor(Resident::kAll, 2, w, 0);
  std::vector<BatchPlan> batch_plans;
  PlanDirect(o, w, &batch_plans);
  std::multiset<uint64_t> fetched, evicted;
  for (size_t b = 0; b < batch_plans.size(); ++b) {
    for (const RowSlot& r : batch_plans[b].prefetch) fetched.insert(uint64_t{r.table} << 32 | r.row);
    for (const auto& own : batch_plans[b].trainers) CHECK(own.private_prefetch.empty());
    if (b + 1 < batch_plans.size()) CHECK(batch_plans[b].evictions.empty());
    for (const auto& e : batch_plans[b].evictions) evicted.insert(uint64_t{e.table} << 32 | e.row);
  }
  CHECK(std::set<uint64_t>(fetched.begin(), fetched.end()).size() == fetched.size());
  CHECK(fetched == evicted);
}

TEST_CASE("no_cache stages every row for its own batch", "[oracle]") {
  const Workload w = MakeWorkload(9, Skew::kZipf12, 10, 32, {50, 200});
  const DirectOptions o = OptionsFor(Resident::kNone, 3, w, 128);
  std::vector<BatchPlan> batch_plans;
  PlanDirect(o, w, &batch_plans);
  for (const BatchPlan& p : batch_plans) {
    size_t privates = 0;
    for (const auto& own : p.trainers) privates += own.private_rows.size();
    // Every staged row leaves after its batch: shared ones by eviction,
    // private ones by their owner's write-back.
    CHECK(p.evictions.size() == p.prefetch.size());
    CHECK(p.critical.size() == p.prefetch.size());
    CHECK(p.prefetch.size() + privates > 0);
  }
}

TEST_CASE("direct plans that do not fit their staging slots name training.cache_rows", "[oracle]") {
  const Workload w = MakeWorkload(3, Skew::kUniform, 4, 64, {1000, 1000});
  DirectPlanner planner(OptionsFor(Resident::kNone, 2, w, 8));
  Result<Plans> plans = PlanAllWith(planner, 2, w);
  REQUIRE_FALSE(plans.ok());
  CHECK_THAT(plans.status().message(), Catch::Contains("training.cache_rows"));
}

TEST_CASE("direct options refuse listed rows twice or out of range", "[oracle]") {
  DirectOptions o;
  o.trainers = 2;
  o.table_rows = {10, 10};
  o.resident = Resident::kListed;
  o.listed = {uint64_t{1} << 32 | 3, 4};
  CHECK(Validate(o).ok());
  o.listed.push_back(4);
  CHECK_THAT(Validate(o).message(), Catch::Contains("twice"));
  o.listed = {uint64_t{1} << 32 | 10};
  CHECK_THAT(Validate(o).message(), Catch::Contains("out of range"));
  o.listed.clear();
  o.trainers = 0;
  CHECK_FALSE(Validate(o).ok());
}

TEST_CASE("the executor catches a direct plan that skips a resident row's sync", "[oracle]") {
  // A negative control: the check above can fail.
  const Workload w = MakeWorkload(2, Skew::kZipf12, 12, 32, {40, 300});
  const DirectOptions o = OptionsFor(Resident::kListed, 2, w, 128);
  Plans plans = PlanDirect(o, w);
  REQUIRE(Violations(ExecutorOf(o), w, plans) == "");
  bool mutated = false;
  for (size_t b = 0; b + 1 < plans.size() && !mutated; ++b) {
    if (plans[b][0].critical.empty()) continue;
    for (TrainerPlan& p : plans[b]) p.critical.erase(p.critical.begin());
    mutated = true;
  }
  REQUIRE(mutated);
  CHECK(Violations(ExecutorOf(o), w, plans) != "");
}
