// Bag lengths follow their distributions.
#include "data/gen/bag_length_sampler.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace actorrec::data::gen;

namespace {

struct Moments {
  double mean = 0, variance = 0;
  uint32_t min = ~0u, max = 0;
};

Moments Draw(const BagLength& bag, int draws) {
  BagLengthSampler sampler(bag);
  Rng rng(5);
  double sum = 0, sum2 = 0;
  Moments m;
  for (int i = 0; i < draws; ++i) {
    const uint32_t l = sampler.Sample(rng);
    sum += l;
    sum2 += static_cast<double>(l) * l;
    m.min = std::min(m.min, l);
    m.max = std::max(m.max, l);
  }
  m.mean = sum / draws;
  m.variance = sum2 / draws - m.mean * m.mean;
  return m;
}

}  // namespace

TEST_CASE("bag lengths follow their distribution's mean and support", "[data]") {
  const int n = 200000;
  SECTION("fixed") {
    const Moments m = Draw(BagLength::Fixed(3), n);
    CHECK((m.min == 3 && m.max == 3));
  }
  SECTION("uniform on [2, 6]") {
    const Moments m = Draw(BagLength::Uniform(2, 6), n);
    CHECK((m.min == 2 && m.max == 6));
    CHECK(m.mean == Approx(4.0).margin(0.02));
    CHECK(m.variance == Approx(2.0).margin(0.05));
  }
  SECTION("geometric with mean 3, never empty") {
    const Moments m = Draw(BagLength::Geometric(3.0), n);
    CHECK(m.min == 1);
    CHECK(m.mean == Approx(3.0).margin(0.03));
    CHECK(m.variance == Approx(6.0).margin(0.2));  // (1 - p) / p^2 with p = 1/3
  }
  SECTION("Poisson with mean 2.5, sometimes empty") {
    const Moments m = Draw(BagLength::Poisson(2.5), n);
    CHECK(m.min == 0);
    CHECK(m.mean == Approx(2.5).margin(0.02));
    CHECK(m.variance == Approx(2.5).margin(0.05));
  }
  SECTION("Poisson with a large mean") {
    const Moments m = Draw(BagLength::Poisson(400.0), 20000);
    CHECK(m.mean == Approx(400.0).margin(0.75));
  }
}
