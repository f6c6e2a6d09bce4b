// Auto-L: the largest lookahead that fits, and a clear error when none does.
#include <catch2/catch.hpp>

#include "actors/oracle/auto_lookahead.hpp"
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

TEST_CASE("a cache too small for lookahead 1 fails naming the capacity it needs", "[oracle]") {
  const Workload w = MakeWorkload(8, Skew::kZipf12, 60, 18, {50, 400, 3000});
  PlannerOptions options = Options(1);
  const uint32_t needed = PeakOccupancy(options, AllRows(options, w), 1)[0];
  options.partitions[0].capacity = needed - 1;
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE_FALSE(plans.ok());
  REQUIRE(plans.status().code() == Status::Code::kInvalidArgument);
  REQUIRE_THAT(plans.status().message(),
               Catch::Contains("too small even for lookahead 1") &&
                   Catch::Contains("needs " + std::to_string(needed) + " slots per trainer but has " +
                                   std::to_string(needed - 1)));
}
