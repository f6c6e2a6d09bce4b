// data::DenseDedup (a dedup group's distinct dense rows) against a naive
// model: a std::map from (tuple, the row's bits) to its number, numbered in
// order of first use.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "data/batches/dense_dedup.hpp"
#include "data/gen/random.hpp"

namespace actorrec::data {
namespace {

struct Naive {
  std::vector<uint32_t> inverse, first;
};

Naive NaiveDedup(const std::vector<float>& dense, size_t n, size_t width, const uint32_t* tuple_of) {
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> seen;
  Naive out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint32_t> bits(width);
    std::memcpy(bits.data(), dense.data() + i * width, width * sizeof(float));
    auto [at, fresh] = seen.try_emplace({tuple_of ? tuple_of[i] : 0u, bits}, static_cast<uint32_t>(out.first.size()));
    if (fresh) out.first.push_back(static_cast<uint32_t>(i));
    out.inverse.push_back(at->second);
  }
  return out;
}

}  // namespace

TEST_CASE("DenseDedup numbers distinct (tuple, dense row) pairs in order of first use, as a naive map",
          "[data][dedup]") {
  DenseDedup dedup;  // reused: its scratch must not leak between calls
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    gen::Rng rng(seed);
    const size_t n = rng.Below(300), width = 1 + rng.Below(5), tuples = 1 + rng.Below(6), pool = 1 + rng.Below(8);
    // Rows from a small pool (so that rows repeat across tuples too), +0 and
    // -0 among the values; sessions: a sample often repeats the previous.
    std::vector<float> rows(pool * width);
    for (float& x : rows) x = rng.Below(4) == 0 ? (rng.Below(2) ? 0.0f : -0.0f) : static_cast<float>(rng.Below(3));
    std::vector<float> dense(n * width);
    std::vector<uint32_t> tuple_of(n);
    for (size_t i = 0; i < n; ++i) {
      const bool repeat = i > 0 && rng.Below(3) != 0;
      const size_t r = rng.Below(pool);
      for (size_t j = 0; j < width; ++j) dense[i * width + j] = repeat ? dense[(i - 1) * width + j] : rows[r * width + j];
      tuple_of[i] = repeat && rng.Below(4) != 0 ? tuple_of[i - 1] : static_cast<uint32_t>(rng.Below(tuples));
    }
    const bool grouped = seed % 3 != 0;
    INFO("seed " << seed << " n " << n << " width " << width << (grouped ? "" : " (no tuples)"));
    const uint32_t* t = grouped ? tuple_of.data() : nullptr;
    dedup.Run(dense.data(), n, width, t);
    const Naive want = NaiveDedup(dense, n, width, t);
    CHECK(dedup.inverse() == want.inverse);
    CHECK(dedup.first() == want.first);
    CHECK(dedup.distinct() == want.first.size());
  }
}

TEST_CASE("DenseDedup splits a tuple whose rows differ and tells -0.0f from +0.0f", "[data][dedup]") {
  // Samples 0-2 are one tuple, 3 another with sample 0's row.
  const std::vector<float> dense = {1.0f, 2.0f, 1.0f, 2.0f, 0.0f, 2.0f, 1.0f, 2.0f, -0.0f, 2.0f};
  const std::vector<uint32_t> tuple_of = {0, 0, 0, 1, 0};
  DenseDedup dedup;
  dedup.Run(dense.data(), 5, 2, tuple_of.data());
  CHECK(dedup.inverse() == std::vector<uint32_t>{0, 0, 1, 2, 3});
  CHECK(dedup.first() == std::vector<uint32_t>{0, 2, 3, 4});
  dedup.Run(dense.data(), 5, 2, nullptr);
  CHECK(dedup.inverse() == std::vector<uint32_t>{0, 0, 1, 0, 2});
}

}  // namespace actorrec::data
