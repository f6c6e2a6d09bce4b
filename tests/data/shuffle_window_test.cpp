// The bounded window shuffle of text and binary training files: a
// permutation within each window, the same whatever the block sizes, other
// for another seed.
#include "data/shuffle_window.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "tests/data/counting_reader.hpp"

namespace actorrec::data {
namespace {

using testing::CountingReader;
using testing::DrainLabels;

TEST_CASE("the window shuffle permutes within each window, whatever the block sizes", "[data]") {
  const uint64_t seed = GENERATE(take(4, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  const uint64_t n = 1 + rng() % 5000;
  const size_t window = 1 + rng() % 1500;
  const auto a = DrainLabels(*ShuffleWindow(std::make_unique<CountingReader>(n, 1 + rng() % 300), window, seed), 1 + rng() % 700);
  const auto b = DrainLabels(*ShuffleWindow(std::make_unique<CountingReader>(n, 1 + rng() % 300), window, seed), 1 + rng() % 700);
  REQUIRE(a == b);  // block sizes of reader and caller change nothing
  REQUIRE(a.size() == n);
  // Window w holds exactly the samples [w·window, (w+1)·window).
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(static_cast<size_t>(a[i]) / window == i / window);
  std::vector<float> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == static_cast<float>(i));
  if (window >= 8 && n >= 8) CHECK(a != sorted);  // shuffled
  const auto other = DrainLabels(*ShuffleWindow(std::make_unique<CountingReader>(n, 97), window, seed + 1), 64);
  if (window >= 8 && n >= 8) CHECK(other != a);
}

}  // namespace
}  // namespace actorrec::data
