// RecD's DedupeFactor: the model's closed form, and measured on session data.
#include "data/stats/dedupe_model.hpp"

#include <catch2/catch.hpp>

#include "data/gen/synthetic_generator.hpp"
#include "data/stats/dataset_stats.hpp"

using namespace actorrec::data;
using namespace actorrec::data::stats;

TEST_CASE("the expected distinct values of a batch count session starts and fresh draws", "[data]") {
  const uint64_t first = GENERATE(take(10, random(0, 100)));
  const uint64_t count = GENERATE(take(5, random(0, 40)));
  const uint32_t s = GENERATE(1, 3, 8);
  const double d = 0.7;
  double direct = 0;
  for (uint64_t g = first; g < first + count; ++g) direct += (g == first || g % s == 0) ? 1.0 : 1.0 - d;
  CHECK(ExpectedUniqueBags(first, count, s, d) == Approx(direct));
}

TEST_CASE("the modelled DedupeFactor of whole sessions is S / (1 + (S - 1)(1 - d))", "[data]") {
  CHECK(ModelDedupeFactor(8, 0.9) == Approx(8.0 / 1.7));
  CHECK(ModelDedupeFactor(8, 0.1) == Approx(8.0 / 7.3));
  CHECK(ModelDedupeFactor(8, 0.0) == Approx(1.0));
  CHECK(ModelDedupeFactor(8, 1.0) == Approx(8.0));
  CHECK(ModelDedupeFactor(1, 0.9) == Approx(1.0));
}

TEST_CASE("session data with S = 8 has the modelled DedupeFactor within 2 %", "[data]") {
  gen::GeneratorOptions o;
  o.samples = 200000;
  o.num_dense = 0;
  o.session_length = 8;
  o.auc_sample_cap = 0;
  // Uniform over 10^6 rows: fresh draws almost never coincide (the model's
  // assumption); about 0.04 % of a batch's values would.
  o.tables = {{"user", 1000000, gen::AccessDistribution::Uniform(), gen::BagLength::Fixed(1), false, 0.9},
              {"item", 1000000, gen::AccessDistribution::Uniform(), gen::BagLength::Fixed(1), false, 0.1},
              {"history", 1000000, gen::AccessDistribution::Uniform(), gen::BagLength::Geometric(3), false, 0.5}};
  auto g = gen::SyntheticGenerator::Open(o);
  REQUIRE(g.ok());
  StatsOptions so;
  so.batch_size = GENERATE(4096, 1000);  // whole sessions, and batches that cut sessions
  so.session_length = o.session_length;
  so.session_dup_prob = o.SessionDupProbs();
  auto stats = ComputeStats(**g, so);
  REQUIRE(stats.ok());
  for (const TableStats& t : stats->tables) {
    INFO(t.name << ": measured " << t.dedupe_factor << ", model " << t.dedupe_factor_model);
    // The statistical error is ~0.3 % (25 000 sessions). Bags that can be
    // empty would not fit the model: all empty bags of a batch are one
    // value (Poisson(3) bags measured 1.87 against a model of 1.78).
    CHECK(t.dedupe_factor == Approx(t.dedupe_factor_model).epsilon(0.02));
  }
  if (so.batch_size == 4096) CHECK(stats->tables[0].dedupe_factor_model == Approx(ModelDedupeFactor(8, 0.9)));
}
