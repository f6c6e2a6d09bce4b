// Tests of KeyMap against std::unordered_map.
#include "data/readers/key_map.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <unordered_map>

namespace actorrec::data::readers {
namespace {

TEST_CASE("KeyMap holds the same entries as std::unordered_map, the sentinel key included", "[data]") {
  const uint64_t seed = GENERATE(take(10, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  KeyMap<uint64_t> map;
  std::unordered_map<uint64_t, uint64_t> model;
  for (int i = 0; i < 5000; ++i) {
    // Small keys collide in the home slot often; ~0 is the empty marker.
    const uint64_t key = rng() % 4 == 0 ? ~uint64_t{0} - rng() % 2 : (rng() % 2 ? rng() % 300 : rng());
    const uint64_t add = rng() % 5;
    map[key] += add;
    model[key] += add;
  }
  CHECK(map.size() == model.size());
  for (const auto& [key, value] : model) {
    const uint64_t* got = map.Find(key);
    REQUIRE(got != nullptr);
    CHECK(*got == value);
  }
  size_t seen = 0;
  map.ForEach([&](uint64_t key, uint64_t value) {
    ++seen;
    CHECK(model.at(key) == value);
  });
  CHECK(seen == model.size());
  uint64_t absent = 1000;
  while (model.count(absent) != 0) ++absent;
  CHECK(map.Find(absent) == nullptr);
}

}  // namespace
}  // namespace actorrec::data::readers
