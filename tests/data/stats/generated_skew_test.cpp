// The skew the generator is asked for is the skew the statistics measure.
#include <catch2/catch.hpp>

#include "data/gen/synthetic_generator.hpp"
#include "data/stats/dataset_stats.hpp"

using namespace actorrec::data;
using namespace actorrec::data::gen;
using namespace actorrec::data::stats;

namespace {

// Stats of `samples` single-hot samples of one table. top_fractions = {1 %}.
TableStats OneTable(uint64_t rows, const AccessDistribution& access, uint64_t samples) {
  GeneratorOptions o;
  o.samples = samples;
  o.num_dense = 0;
  o.auc_sample_cap = 0;
  o.tables = {{"t", rows, access, BagLength::Fixed(1), false, 0.0}};
  auto gen = SyntheticGenerator::Open(o);
  REQUIRE(gen.ok());
  StatsOptions so;
  so.top_fractions = {0.01};
  so.cache_fractions = {0.01};
  auto stats = ComputeStats(**gen, so);
  REQUIRE(stats.ok());
  REQUIRE(stats->samples == samples);
  return stats->tables[0];
}

}  // namespace

TEST_CASE("top 1 % of rows taking 90 % of accesses measures 0.90 within 0.01", "[data]") {
  // 100 000 rows: hot rows get ~900 accesses each, cold ones ~1, so the
  // measured top 1 % is the hot set and the share's standard error is 3e-4.
  const TableStats t = OneTable(100000, AccessDistribution::TopShare(0.01, 0.9), 1'000'000);
  CHECK(t.top_share_of_rows[0] == Approx(0.90).margin(0.01));
  // A static cache of those 1 % holds the hot rows. Per 4096-sample batch,
  // 3686 hot accesses touch 1000 (1 - e^-3.686) = 975 hot rows and 410 cold
  // ones 409 cold rows: 975 / 1384 = 0.705 of the distinct rows hit.
  CHECK(t.cache_hit_rate[0] == Approx(0.705).margin(0.01));
}

TEST_CASE("Zipf 1.2 is more skewed than Zipf 0.8 in the measured top 1 %", "[data]") {
  const TableStats steep = OneTable(100000, AccessDistribution::Zipf(1.2), 300000);
  const TableStats flat = OneTable(100000, AccessDistribution::Zipf(0.8), 300000);
  INFO("Zipf 1.2: " << steep.top_share_of_rows[0] << ", Zipf 0.8: " << flat.top_share_of_rows[0]);
  CHECK(steep.top_share_of_rows[0] > flat.top_share_of_rows[0] + 0.2);
  CHECK(steep.coalescing_ratio < flat.coalescing_ratio);
  CHECK(steep.distinct_rows < flat.distinct_rows);
}

TEST_CASE("uniform access gives the top 1 % about 1 % of accesses", "[data]") {
  // Measured from counts, the top 1 % are the luckiest rows: with 1000
  // accesses per row (sd 32) the 10 luckiest average about 2.6 sd above the
  // mean, so the share is ~1.08 %, not 1 %. More samples per row shrink it.
  const TableStats t = OneTable(1000, AccessDistribution::Uniform(), 1'000'000);
  CHECK(t.top_share_of_rows[0] >= 0.0100);
  CHECK(t.top_share_of_rows[0] < 0.0115);
  CHECK(t.distinct_rows == 1000);
}
