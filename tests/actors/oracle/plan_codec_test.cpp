// TrainerPlan frames: planner output survives the codec, bad frames do not.
#include <catch2/catch.hpp>

#include "messages/plan_codec.hpp"
#include "tests/actors/oracle/harness.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

TEST_CASE("every plan of a run round-trips through the plan codec", "[oracle]") {
  const Workload w = MakeWorkload(21, Skew::kZipf12, 20, 12, {40, 700});
  PlannerOptions options;
  options.trainers = 3;
  options.table_rows = w.table_rows;
  options.partitions = {{{1}, 300}, {{0}, 60}};
  options.lookahead = 3;
  Result<Plans> plans = PlanAll(options, w);
  REQUIRE(plans.ok());
  for (const auto& batch : *plans) {
    for (const TrainerPlan& plan : batch) {
      TrainerPlan decoded;
      REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &decoded).ok());
      REQUIRE(decoded == plan);
    }
  }
}

TEST_CASE("the plan codec refuses plans a trainer could not follow", "[oracle]") {
  TrainerPlan plan;
  plan.batch = 9;
  plan.trainer = 1;
  plan.lookahead = 2;
  plan.barrier = 6;
  plan.features = {{0, {4, 7}, {1, 0, 1}, {0, 2, 3}}, {2, {5}, {0, 0, 0}, {0, 1, 3}}};
  plan.evictions = {{0, 11, 4, 0}};
  TrainerPlan out;
  REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &out).ok());

  SECTION("a barrier below b - L - 1 or at b") {
    plan.barrier = 5;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("barrier 5"));
    plan.barrier = 9;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("barrier 9"));
  }
  SECTION("a resumed run's raised barrier is accepted") {
    plan.barrier = 8;  // resumed at batch 9: the checkpoint holds batch 8's write-backs
    REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &out).ok());
    CHECK(out.barrier == 8);
  }
  SECTION("no lookahead (the direct modes): the barrier must be b - 1") {
    plan.lookahead = 0;
    plan.barrier = 8;
    REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &out).ok());
    CHECK(out.lookahead == 0);
    plan.barrier = 7;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("barrier 7"));
  }
  SECTION("a negative batch") {
    plan.batch = -1;
    REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &out).code() == Status::Code::kCorruption);
  }
  SECTION("an inverse entry past the unique slots") {
    plan.features[1].inverse[2] = 1;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(),
                 Catch::Contains("features of table 2: inverse entry 2"));
  }
  SECTION("offsets that do not end at the inverse's length") {
    plan.features[0].offsets.back() = 2;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("offsets"));
  }
  SECTION("tables out of order") {
    std::swap(plan.features[0], plan.features[1]);
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("strictly ascending"));
  }
  SECTION("tables with different sample counts") {
    plan.features[1].offsets = {0, 3};
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("samples"));
  }
  SECTION("a bag group: its tables hold U tuples, its samples name them") {
    // Table 0's two samples share one tuple: one bag over the group.
    plan.features[0].offsets = {0, 3};
    plan.bag_groups = {{{0}, {0, 0}}};
    REQUIRE(wire::DecodePlan(wire::EncodePlan(plan), &out).ok());
    CHECK(out == plan);
    plan.bag_groups[0].bag_of[1] = 1;
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(),
                 Catch::Contains("bag group 0: sample 1 uses tuple 1 of 1"));
    plan.bag_groups[0].bag_of = {0, 0, 0};
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("samples"));
    plan.bag_groups = {{{0, 2}, {0, 0}}};
    REQUIRE_THAT(wire::DecodePlan(wire::EncodePlan(plan), &out).message(), Catch::Contains("table 2"));
  }
  SECTION("truncated bytes") {
    auto frame = wire::EncodePlan(plan);
    frame.bytes.resize(frame.bytes.size() - 8);
    REQUIRE(wire::DecodePlan(frame, &out).code() == Status::Code::kCorruption);
  }
}
