// The fixed hold-out rule (dataset.eval_fraction): the two sides partition
// the stream, keep its order, hold out about the fraction, and do not depend
// on how the stream is cut into blocks.
#include "data/holdout.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "tests/data/counting_reader.hpp"

namespace actorrec::data {
namespace {

using testing::CountingReader;
using testing::DrainLabels;

TEST_CASE("the held-out and training sides partition the stream in order, whatever the block sizes", "[data]") {
  const double fraction = GENERATE(0.01, 0.1, 0.5, 0.9);
  std::mt19937_64 rng(static_cast<uint64_t>(fraction * 1000));
  const uint64_t n = 20000;
  const size_t inner_block = 1 + rng() % 700, outer = 1 + rng() % 900;
  const auto eval = DrainLabels(*HoldOutSplit(std::make_unique<CountingReader>(n, inner_block), fraction, true), outer);
  const auto train = DrainLabels(*HoldOutSplit(std::make_unique<CountingReader>(n, 1 + rng() % 50), fraction, false), 1 + rng() % 64);
  REQUIRE(eval.size() + train.size() == n);
  // In order, and each index on the side the rule says.
  for (size_t i = 1; i < eval.size(); ++i) REQUIRE(eval[i - 1] < eval[i]);
  for (size_t i = 1; i < train.size(); ++i) REQUIRE(train[i - 1] < train[i]);
  for (float x : eval) REQUIRE(HeldOut(static_cast<uint64_t>(x), fraction));
  for (float x : train) REQUIRE(!HeldOut(static_cast<uint64_t>(x), fraction));
  // About the fraction: within 4 standard deviations of a binomial.
  const double sd = std::sqrt(n * fraction * (1 - fraction));
  CHECK(std::abs(static_cast<double>(eval.size()) - n * fraction) < 4 * sd);
}

TEST_CASE("a fraction of 0 holds nothing out", "[data]") {
  for (uint64_t i = 0; i < 1000; ++i) REQUIRE(!HeldOut(i, 0.0));
}

}  // namespace
}  // namespace actorrec::data
