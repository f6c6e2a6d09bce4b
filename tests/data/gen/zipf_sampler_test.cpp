// ZipfSampler (rejection-inversion) against the exact probability mass.
#include "data/gen/zipf_sampler.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using actorrec::data::gen::Rng;
using actorrec::data::gen::ZipfSampler;
using actorrec::data::gen::ZipfWeightSum;

TEST_CASE("Zipf draws on a small range follow k^-alpha", "[data]") {
  const double alpha = GENERATE(0.5, 1.0, 1.05, 1.3, 2.5);
  const uint64_t n = 20;
  const int draws = 200000;
  ZipfSampler zipf(n, alpha);
  Rng rng(7);
  std::vector<int> hits(n, 0);
  for (int i = 0; i < draws; ++i) {
    const uint64_t r = zipf.Sample(rng);
    REQUIRE(r < n);
    ++hits[r];
  }
  const double total = ZipfWeightSum(alpha, 1, n);
  for (uint64_t k = 0; k < n; ++k) {
    const double p = std::pow(k + 1.0, -alpha) / total;
    // Five binomial standard deviations: a false alarm about once in 10^6 checks.
    CHECK(std::fabs(hits[k] / double{draws} - p) <= 5 * std::sqrt(p * (1 - p) / draws) + 1e-9);
  }
}

TEST_CASE("a Zipf sampler started past the head draws the tail in proportion", "[data]") {
  const double alpha = 1.1;
  ZipfSampler tail(1000, alpha, 11);
  Rng rng(3);
  int at_10 = 0, at_11 = 0;
  const int draws = 400000;
  for (int i = 0; i < draws; ++i) {
    const uint64_t r = tail.Sample(rng);
    REQUIRE(r >= 10);
    REQUIRE(r < 1000);
    at_10 += r == 10;
    at_11 += r == 11;
  }
  const double p10 = std::pow(11.0, -alpha) / ZipfWeightSum(alpha, 11, 1000);
  CHECK(at_10 / double{draws} == Approx(p10).margin(5 * std::sqrt(p10 / draws)));
  CHECK(double(at_10) / at_11 == Approx(std::pow(12.0 / 11.0, alpha)).epsilon(0.03));
}

TEST_CASE("ZipfWeightSum matches direct summation", "[data]") {
  const double alpha = GENERATE(0.8, 1.0, 1.05, 1.2);
  const uint64_t first = GENERATE(1, 100, 65537);
  const uint64_t last = 300000;
  double direct = 0;
  for (uint64_t k = last; k >= first; --k) direct += std::pow(static_cast<double>(k), -alpha);
  CHECK(ZipfWeightSum(alpha, first, last) == Approx(direct).epsilon(1e-10));
  CHECK(ZipfWeightSum(alpha, 5, 4) == 0.0);
}
