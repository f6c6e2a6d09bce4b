// The proof: on many seeds, skews, lookaheads, trainer counts and tight
// capacities, the independent executor finds every plan correct.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "actors/oracle/auto_lookahead.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

namespace {

// Table 0 is small (heavy reuse, mostly shared), table 2 large (mostly
// private misses); tables 1 and 2 are multi-hot.
const std::vector<uint64_t> kTableRows = {40, 300, 2000};

PlannerOptions Options(uint32_t trainers, uint32_t lookahead, bool split) {
  PlannerOptions o;
  o.trainers = trainers;
  o.table_rows = kTableRows;
  o.lookahead = lookahead;
  o.partitions = split ? std::vector<Partition>{{{0, 2}, 1}, {{1}, 1}} : OnePartition(kTableRows.size(), 1);
  return o;
}

}  // namespace

TEST_CASE("plans keep every read current, every update on its way to the store, and the cache within capacity",
          "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf08, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t lookahead = GENERATE(1u, 2u, 5u, 50u);
  const uint32_t trainers = GENERATE(1u, 2u, 3u, 8u);
  const uint64_t seed = GENERATE(take(3, random(1, 1000000)));
  const bool split = seed % 2 == 0;
  CAPTURE(SkewName(skew), lookahead, trainers, seed, split);

  // Long enough for slots to come out of quarantine at L = 50.
  const Workload w = MakeWorkload(seed, skew, 130, 24, kTableRows);
  PlannerOptions options = Options(trainers, lookahead, split);
  // Tight: every partition gets exactly the peak it needs at this L.
  const std::vector<uint32_t> peaks = PeakOccupancy(options, AllRows(options, w), lookahead);
  for (size_t p = 0; p < peaks.size(); ++p) options.partitions[p].capacity = std::max(peaks[p], 1u);

  Result<Plans> plans = PlanAll(options, w);
  REQUIRE(plans.ok());
  // The run exercises what the executor checks: every kind of row, and
  // slots reused after quarantine.
  uint64_t fetched = 0, privates = 0, critical = 0, delayed = 0;
  for (const auto& batch : *plans) {
    fetched += batch[0].prefetch.size();
    critical += batch[0].critical.size();
    delayed += batch[0].delayed.size();
    for (const TrainerPlan& p : batch) {
      fetched += p.private_prefetch.size();
      privates += p.private_rows.size();
    }
  }
  CHECK(privates > 0);
  CHECK(critical > 0);
  CHECK((delayed > 0 || lookahead == 1));
  CHECK(fetched > options.partitions[0].capacity + (split ? options.partitions[1].capacity : 0));
  for (bool lazy : {false, true}) {
    CAPTURE(lazy);
    REQUIRE(Violations(ExecutorFor(options, lookahead, lazy), w, *plans) == "");
  }

  // One slot fewer does not fit, and the error names the capacity needed.
  if (peaks[0] > 1) {
    options.partitions[0].capacity = peaks[0] - 1;
    Result<Plans> short_plans = PlanAll(options, w);
    REQUIRE_FALSE(short_plans.ok());
    REQUIRE_THAT(short_plans.status().message(),
                 Catch::Contains("needs " + std::to_string(peaks[0]) + " slots per trainer"));
  }
}

TEST_CASE("peak occupancy never falls as the lookahead grows", "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t trainers = GENERATE(1u, 3u);
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  CAPTURE(SkewName(skew), trainers, seed);
  const Workload w = MakeWorkload(seed, skew, 80, 16, kTableRows);
  const PlannerOptions options = Options(trainers, 1, /*split=*/true);
  const std::deque<BatchRows> rows = AllRows(options, w);
  std::vector<uint32_t> previous = PeakOccupancy(options, rows, 1);
  for (uint32_t lookahead = 2; lookahead <= 40; ++lookahead) {
    const std::vector<uint32_t> peaks = PeakOccupancy(options, rows, lookahead);
    for (size_t p = 0; p < peaks.size(); ++p) REQUIRE(peaks[p] >= previous[p]);
    previous = peaks;
  }
}

TEST_CASE("replicated plans (private_rows = false) have no private row and sync every updated row", "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t lookahead = GENERATE(1u, 3u, 50u);
  const uint32_t trainers = GENERATE(1u, 2u, 5u);
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  const bool split = seed % 2 == 0;
  CAPTURE(SkewName(skew), lookahead, trainers, seed, split);

  const Workload w = MakeWorkload(seed, skew, 120, 24, kTableRows);
  PlannerOptions options = Options(trainers, lookahead, split);
  options.private_rows = false;
  const std::vector<uint32_t> peaks = PeakOccupancy(options, AllRows(options, w), lookahead);
  for (size_t p = 0; p < peaks.size(); ++p) options.partitions[p].capacity = std::max(peaks[p], 1u);
  std::vector<BatchPlan> batch_plans;
  Result<Plans> plans = PlanAll(options, w, nullptr, &batch_plans);
  REQUIRE(plans.ok());

  // The same rows as the lrpp plans: each private row of those is here a
  // shared one, each private miss a shared prefetch.
  PlannerOptions lrpp = options;
  lrpp.private_rows = true;
  for (Partition& p : lrpp.partitions) p.capacity = UINT32_MAX / 4;
  std::vector<BatchPlan> lrpp_plans;
  REQUIRE(PlanAll(lrpp, w, nullptr, &lrpp_plans).ok());
  uint64_t lrpp_private = 0;
  for (size_t b = 0; b < batch_plans.size(); ++b) {
    CAPTURE(b);
    const BatchPlan& r = batch_plans[b];
    const BatchPlan& l = lrpp_plans[b];
    size_t l_private = 0, l_private_misses = 0;
    for (uint32_t t = 0; t < trainers; ++t) {
      REQUIRE(r.trainers[t].private_rows.empty());
      REQUIRE(r.trainers[t].private_prefetch.empty());
      l_private += l.trainers[t].private_rows.size();
      l_private_misses += l.trainers[t].private_prefetch.size();
    }
    lrpp_private += l_private;
    REQUIRE(r.critical.size() + r.delayed.size() == l.critical.size() + l.delayed.size() + l_private);
    REQUIRE(r.prefetch.size() == l.prefetch.size() + l_private_misses);
    REQUIRE(r.critical.size() >= l.critical.size());
    REQUIRE(r.evictions.size() == l.evictions.size() + l_private_misses);
  }
  CHECK(lrpp_private > 0);  // the mode made a difference
  for (bool lazy : {false, true}) {
    CAPTURE(lazy);
    REQUIRE(Violations(ExecutorFor(options, lookahead, lazy), w, *plans) == "");
  }
  // The executor's set checks do tell the modes apart: lrpp plans are wrong
  // as replicated plans.
  Result<Plans> lrpp_as_replicated = PlanAll(lrpp, w);
  REQUIRE(lrpp_as_replicated.ok());
  REQUIRE_THAT(Violations(ExecutorFor(options, lookahead, false), w, *lrpp_as_replicated),
               Catch::Contains("private rows are not exactly"));
}

TEST_CASE("without delayed sync (lrpp, replicated) every shared updated row is critical and nothing else changes",
          "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf08, Skew::kTop1Percent90);
  const uint32_t lookahead = GENERATE(1u, 5u, 50u);
  const uint32_t trainers = GENERATE(2u, 3u);
  const bool private_rows = GENERATE(true, false);
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  const bool split = seed % 2 == 0;
  CAPTURE(SkewName(skew), lookahead, trainers, private_rows, seed, split);

  const Workload w = MakeWorkload(seed, skew, 100, 24, kTableRows);
  PlannerOptions delayed = Options(trainers, lookahead, split);
  delayed.private_rows = private_rows;
  const std::vector<uint32_t> peaks = PeakOccupancy(delayed, AllRows(delayed, w), lookahead);
  for (size_t p = 0; p < peaks.size(); ++p) delayed.partitions[p].capacity = std::max(peaks[p], 1u);
  PlannerOptions options = delayed;
  options.delayed_sync = false;
  std::vector<BatchPlan> plans, delayed_plans;
  Result<Plans> trainer_plans = PlanAll(options, w, nullptr, &plans);
  REQUIRE(trainer_plans.ok());
  REQUIRE(PlanAll(delayed, w, nullptr, &delayed_plans).ok());
  REQUIRE(plans.size() == delayed_plans.size());
  auto keys = [](const std::vector<RowSlot>& rows) {
    std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> k;
    for (const RowSlot& r : rows) k.emplace_back(r.table, r.row, r.slot);
    std::sort(k.begin(), k.end());
    return k;
  };
  uint64_t moved = 0;
  for (size_t b = 0; b < plans.size(); ++b) {
    CAPTURE(b);
    const BatchPlan& p = plans[b];
    const BatchPlan& d = delayed_plans[b];
    REQUIRE(p.delayed.empty());
    std::vector<RowSlot> both = d.critical;
    both.insert(both.end(), d.delayed.begin(), d.delayed.end());
    REQUIRE(keys(p.critical) == keys(both));
    REQUIRE(keys(p.prefetch) == keys(d.prefetch));
    REQUIRE(p.evictions.size() == d.evictions.size());
    for (uint32_t t = 0; t < trainers; ++t) {
      REQUIRE(keys(p.trainers[t].private_rows) == keys(d.trainers[t].private_rows));
      REQUIRE(keys(p.trainers[t].private_prefetch) == keys(d.trainers[t].private_prefetch));
    }
    moved += d.delayed.size();
  }
  CHECK(moved > 0);  // the option made a difference
  for (bool lazy : {false, true}) {
    CAPTURE(lazy);
    REQUIRE(Violations(ExecutorFor(options, lookahead, lazy), w, *trainer_plans) == "");
  }
}

TEST_CASE("the planner refuses batch rows of another shape or beyond a table, naming them", "[oracle]") {
  PlannerOptions options = Options(2, 2, false);
  options.partitions[0].capacity = 1000;
  Planner planner(options);
  const Workload w = MakeWorkload(5, Skew::kUniform, 1, 24, kTableRows);
  BatchRowsBuilder builder(kTableRows);
  BatchRows rows;
  REQUIRE(builder.Build(w.batches[0], 2, &rows).ok());

  SECTION("a row beyond its table") {
    rows.slice(1, 2).rows.back() = 2000;
    const Status s = planner.Push(rows);
    REQUIRE(s.code() == Status::Code::kInvalidArgument);
    REQUIRE_THAT(s.message(), Catch::Contains("trainer 1 table 2: row 2000 is not below the table's 2000 rows"));
  }
  SECTION("slices for another number of trainers") {
    BatchRows three;
    REQUIRE(builder.Build(w.batches[0], 3, &three).ok());
    const Status s = planner.Push(three);
    REQUIRE(s.code() == Status::Code::kInvalidArgument);
    REQUIRE_THAT(s.message(), Catch::Contains("3 slices of 3 tables; the oracle plans 2 of 3"));
  }
  SECTION("the same rows within range are taken") { REQUIRE(planner.Push(rows).ok()); }
}

TEST_CASE("the vectorized and the portable plan passes make the same plans", "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf08, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t lookahead = GENERATE(1u, 2u, 50u);
  const uint32_t trainers = GENERATE(1u, 3u, 8u);
  const int mode = GENERATE(0, 1, 2);  // lrpp_delayed, lrpp, replicated
  const uint64_t seed = GENERATE(take(2, random(1, 1000000)));
  const bool split = seed % 2 == 0;
  CAPTURE(SkewName(skew), lookahead, trainers, mode, seed, split);
  // Batches of 200 samples: tables of hundreds of entries a batch, so the
  // vector passes run full steps of 16 and a partial last one.
  const Workload w = MakeWorkload(seed, skew, 90, 200, kTableRows);
  PlannerOptions best = Options(trainers, lookahead, split);
  best.private_rows = mode == 0 || mode == 1;
  best.delayed_sync = mode == 0;
  for (Partition& p : best.partitions) p.capacity = UINT32_MAX / 4;
  PlannerOptions portable = best;
  portable.kernel = Kernel::kPortable;
  REQUIRE_FALSE(UseAvx512(portable.kernel));
  if (!UseAvx512(best.kernel)) WARN("this CPU has no AVX-512: both planners run the portable passes");
  std::vector<BatchPlan> best_plans, portable_plans;
  REQUIRE(PlanAll(best, w, nullptr, &best_plans).ok());
  REQUIRE(PlanAll(portable, w, nullptr, &portable_plans).ok());
  REQUIRE(best_plans.size() == w.batches.size());
  uint64_t privates = 0, evictions = 0;
  for (size_t b = 0; b < best_plans.size(); ++b) {
    CAPTURE(b);
    REQUIRE(best_plans[b] == portable_plans[b]);
    evictions += best_plans[b].evictions.size();
    for (const BatchPlan::Own& own : best_plans[b].trainers) privates += own.private_rows.size();
  }
  CHECK(evictions > 0);
  CHECK((privates > 0 || mode == 2));
}
