// The epoch order is a deterministic permutation in (seed, epoch), cut into
// batches with the partial last one kept, restartable at (epoch, batch).
#include "data/format/epoch_order.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

using namespace actorrec::data::format;

namespace {

std::vector<std::vector<uint64_t>> AllBatches(const EpochOrder& order) {
  std::vector<std::vector<uint64_t>> batches(order.num_batches());
  for (uint64_t b = 0; b < order.num_batches(); ++b) order.BatchSamples(b, &batches[b]);
  return batches;
}

std::vector<uint64_t> Flat(const EpochOrder& order) {
  std::vector<uint64_t> all;
  for (const auto& batch : AllBatches(order)) all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

}  // namespace

TEST_CASE("An epoch order is a permutation of the samples in full batches and one partial", "[data]") {
  const uint64_t seed = GENERATE(take(40, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  const uint64_t n = rng() % 600;
  const auto per_chunk = static_cast<uint32_t>(1 + rng() % 40);
  const EpochOptions options{.seed = seed, .shuffle = rng() % 8 != 0, .batch_size = 1 + rng() % 50,
                             .window_chunks = static_cast<uint32_t>(rng() % 5)};
  const EpochOrder order(options, n, per_chunk, rng() % 100);
  CAPTURE(n, per_chunk, options.batch_size, options.window_chunks, options.shuffle);

  const auto batches = AllBatches(order);
  REQUIRE(batches.size() == (n + options.batch_size - 1) / options.batch_size);
  std::vector<uint64_t> all;
  for (size_t b = 0; b < batches.size(); ++b) {
    CHECK(batches[b].size() == (b + 1 < batches.size() ? options.batch_size : n - b * options.batch_size));
    for (size_t i = 0; i < batches[b].size(); ++i) CHECK(order.SampleAt(b * options.batch_size + i) == batches[b][i]);
    all.insert(all.end(), batches[b].begin(), batches[b].end());
  }
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(all == expected);
}

TEST_CASE("The epoch order is the same on every machine and build", "[data]") {
  // Checked against an independent Python model of splitmix64 + Feistel +
  // windows; a change here changes every user's training order.
  const EpochOrder order({.seed = 42, .batch_size = 8, .window_chunks = 2}, 100, 16, 3);
  std::vector<uint64_t> batch;
  order.BatchSamples(0, &batch);
  CHECK(batch == std::vector<uint64_t>{60, 98, 54, 99, 49, 63, 61, 57});
  const FeistelPermutation perm(10, 7);
  std::vector<uint64_t> images;
  for (uint64_t i = 0; i < 10; ++i) images.push_back(perm(i));
  CHECK(images == std::vector<uint64_t>{9, 1, 7, 3, 0, 8, 6, 2, 5, 4});
}

TEST_CASE("Orders differ between seeds and between epochs", "[data]") {
  const EpochOptions a{.seed = 1};
  const EpochOptions b{.seed = 2};
  CHECK(Flat(EpochOrder(a, 5000, 128, 0)) == Flat(EpochOrder(a, 5000, 128, 0)));
  CHECK(Flat(EpochOrder(a, 5000, 128, 0)) != Flat(EpochOrder(b, 5000, 128, 0)));
  CHECK(Flat(EpochOrder(a, 5000, 128, 0)) != Flat(EpochOrder(a, 5000, 128, 1)));
}

TEST_CASE("Without shuffling the order is file order", "[data]") {
  const EpochOrder order({.shuffle = false, .batch_size = 4}, 10, 3, 5);
  CHECK(AllBatches(order) == std::vector<std::vector<uint64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
}

TEST_CASE("Windows bound how many chunks a batch reads", "[data]") {
  const uint64_t n = 1000;
  const uint32_t per_chunk = 100;
  const auto chunks_per_batch = [&](uint32_t window) {
    const EpochOrder order({.seed = 9, .batch_size = 50, .window_chunks = window}, n, per_chunk, 0);
    size_t most = 0;
    for (const auto& batch : AllBatches(order)) {
      std::set<uint64_t> chunks;
      for (uint64_t s : batch) chunks.insert(s / per_chunk);
      most = std::max(most, chunks.size());
    }
    return most;
  };
  CHECK(chunks_per_batch(1) == 1);  // 50 divides 100: batches never straddle
  CHECK(chunks_per_batch(2) <= 2);
  CHECK(chunks_per_batch(0) >= 8);  // a full shuffle reaches nearly all 10
}

TEST_CASE("A full shuffle moves samples about a third of the dataset on average", "[data]") {
  // For a uniform permutation E|pi(p) - p| = (n^2 - 1) / 3n.
  const uint64_t n = 20000;
  const EpochOrder order({.seed = 5, .window_chunks = 0}, n, 1000, 0);
  double distance = 0;
  uint64_t fixed_points = 0;
  for (uint64_t p = 0; p < n; ++p) {
    const uint64_t s = order.SampleAt(p);
    distance += static_cast<double>(s > p ? s - p : p - s);
    fixed_points += s == p;
  }
  CHECK(distance / n == Approx(n / 3.0).epsilon(0.03));
  CHECK(fixed_points < 10);  // expected 1
}

TEST_CASE("A cursor restarted at a saved (epoch, batch) yields the same batches", "[data]") {
  const EpochOptions options{.seed = 77, .batch_size = 7, .window_chunks = 3};
  const uint64_t n = 100;
  EpochCursor walker(options, n, 9);
  std::vector<std::pair<EpochPosition, std::vector<uint64_t>>> walked;
  for (int k = 0; k < 60; ++k) {  // 15 batches per epoch: four epochs
    walked.emplace_back(walker.position(), std::vector<uint64_t>{});
    walker.order().BatchSamples(walker.position().batch, &walked.back().second);
    walker.Advance();
  }
  CHECK(walker.position() == EpochPosition{4, 0});
  const size_t start = GENERATE(0, 1, 14, 15, 31, 44);
  EpochCursor restarted(options, n, 9, walked[start].first);
  for (size_t k = start; k < walked.size(); ++k) {
    CHECK(restarted.position() == walked[k].first);
    std::vector<uint64_t> batch;
    restarted.order().BatchSamples(restarted.position().batch, &batch);
    CHECK(batch == walked[k].second);
    restarted.Advance();
  }
}
