// A gather plan copies every sample of a batch exactly once, from the right
// chunk and row to its batch position, grouped by place in the file.
#include "data/format/gather_plan.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace actorrec::data::format;

TEST_CASE("A gather plan copies each sample once from its chunk and row to its position", "[data]") {
  const uint64_t seed = GENERATE(take(30, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  // Chunk sizes around the 1024-row sort pages, powers of two and not.
  const uint32_t per_chunk = static_cast<uint32_t>(rng() % 2 == 0 ? 1u << (rng() % 13) : 1 + rng() % 5000);
  const uint64_t n = 1 + rng() % 100000;
  std::vector<uint64_t> samples(rng() % 3000);
  for (auto& s : samples) s = rng() % n;
  CAPTURE(per_chunk, n, samples.size());

  GatherPlan plan;
  PlanGather(samples, per_chunk, &plan);
  REQUIRE(plan.slot.size() == samples.size());
  std::vector<int> written(samples.size(), 0);
  for (size_t j = 0; j < samples.size(); ++j) {
    const uint32_t dest = plan.dest[j];
    REQUIRE(dest < samples.size());
    ++written[dest];
    CHECK(plan.chunks[plan.slot[j]] * per_chunk + plan.row[j] == samples[dest]);
  }
  CHECK(std::all_of(written.begin(), written.end(), [](int w) { return w == 1; }));
  std::vector<uint64_t> chunks = plan.chunks;
  std::sort(chunks.begin(), chunks.end());
  CHECK(std::adjacent_find(chunks.begin(), chunks.end()) == chunks.end());
}

TEST_CASE("A gather plan groups copies by chunk and page when they are few", "[data]") {
  // Two chunks of 4096 rows, visited alternately and backwards.
  std::vector<uint64_t> samples;
  for (uint64_t i = 0; i < 512; ++i) samples.push_back((i % 2) * 4096 + (4095 - i * 8));
  GatherPlan plan;
  PlanGather(samples, 4096, &plan);
  REQUIRE(plan.chunks.size() == 2);
  for (size_t j = 1; j < samples.size(); ++j) {
    const auto key = [&](size_t at) { return std::pair(plan.slot[at], plan.row[at] >> 10); };
    CHECK(key(j - 1) <= key(j));
  }
}
