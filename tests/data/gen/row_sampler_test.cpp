// Row permutations and access distributions: bijective, and following their
// exact rank weights on both the alias and the O(1) paths.
#include "data/gen/row_sampler.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using namespace actorrec::data::gen;

TEST_CASE("a row permutation is a bijection of [0, rows) for any size", "[data]") {
  const uint64_t rows = GENERATE(1, 2, 3, 1000, 65536, 65537, take(10, random(1, 200000)));
  RowPermutation perm(rows, 12345);
  std::vector<bool> seen(rows, false);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t row = perm(r);
    REQUIRE(row < rows);
    REQUIRE_FALSE(seen[row]);
    seen[row] = true;
  }
}

TEST_CASE("a row permutation scatters the hottest ranks over the table", "[data]") {
  const uint64_t rows = 1'000'000;
  RowPermutation perm(rows, 99);
  // The first 1000 ranks should spread like uniform picks: about 100 per tenth.
  std::vector<int> tenth(10, 0);
  for (uint64_t r = 0; r < 1000; ++r) ++tenth[perm(r) * 10 / rows];
  for (int count : tenth) CHECK((count > 50 && count < 150));
}

namespace {

// Draws from a sampler and compares the share of draws on the top 1 % of
// ranks and the mean rank (as a fraction of the rows) with RankWeight's.
void CheckFollowsWeights(const AccessDistribution& access, uint64_t rows) {
  RowSampler sampler(access, rows, 4242);
  std::vector<uint64_t> rank_of(rows);
  for (uint64_t r = 0; r < rows; ++r) rank_of[sampler.RowOfRank(r)] = r;
  double total = 0, top = 0, mean = 0;
  const uint64_t top_ranks = rows / 100;
  for (uint64_t r = 0; r < rows; ++r) {
    const double w = RankWeight(access, rows, r);
    total += w;
    if (r < top_ranks) top += w;
    mean += w * static_cast<double>(r) / static_cast<double>(rows);
  }
  top /= total;
  mean /= total;

  Rng rng(17);
  const int draws = 400000;
  double got_top = 0, got_mean = 0;
  for (int i = 0; i < draws; ++i) {
    const actorrec::data::RowId row = sampler.Sample(rng);
    REQUIRE(row < rows);
    const uint64_t r = rank_of[row];
    got_top += r < top_ranks;
    got_mean += static_cast<double>(r) / static_cast<double>(rows);
  }
  // Five standard deviations of each estimate (both variances are <= 1/4).
  const double tolerance = 5 * 0.5 / std::sqrt(double{draws});
  CHECK(got_top / draws == Approx(top).margin(tolerance));
  CHECK(got_mean / draws == Approx(mean).margin(tolerance));
}

}  // namespace

TEST_CASE("rows follow their rank weights on the alias and the O(1) paths", "[data]") {
  // 20 000 rows take the alias path, 300 000 the O(1) one (Zipf: head + tail).
  const uint64_t rows = GENERATE(20000, 300000);
  SECTION("uniform") { CheckFollowsWeights(AccessDistribution::Uniform(), rows); }
  SECTION("Zipf 0.8") { CheckFollowsWeights(AccessDistribution::Zipf(0.8), rows); }
  SECTION("Zipf 1.05") { CheckFollowsWeights(AccessDistribution::Zipf(1.05), rows); }
  SECTION("Zipf 1.5") { CheckFollowsWeights(AccessDistribution::Zipf(1.5), rows); }
  SECTION("top 1 % take 90 %") { CheckFollowsWeights(AccessDistribution::TopShare(0.01, 0.9), rows); }
  SECTION("top 5 % take 50 %") { CheckFollowsWeights(AccessDistribution::TopShare(0.05, 0.5), rows); }
  SECTION("half-normal 0.1") { CheckFollowsWeights(AccessDistribution::HalfNormal(0.1), rows); }
  SECTION("half-normal 2, truncated") { CheckFollowsWeights(AccessDistribution::HalfNormal(2.0), rows); }
  SECTION("exponential 20") { CheckFollowsWeights(AccessDistribution::Exponential(20.0), rows); }
}

TEST_CASE("the hot rows of a top-share table are exactly round(p * rows)", "[data]") {
  CHECK(HotRows(AccessDistribution::TopShare(0.01, 0.9), 100000) == 1000);
  CHECK(HotRows(AccessDistribution::TopShare(0.01, 0.9), 10) == 1);
  CHECK(HotRows(AccessDistribution::TopShare(1.0, 0.9), 10) == 10);
}
