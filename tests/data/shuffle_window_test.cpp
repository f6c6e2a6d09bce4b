// The bounded window shuffle of text and binary training files: a
// permutation within each window, the same whatever the block sizes, other
// for another seed.
#include "data/shuffle_window.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

namespace actorrec::data {
namespace {

// A stream of `n` samples whose label is the sample's index.
class Counting final : public SampleReader {
 public:
  Counting(uint64_t n, size_t block) : n_(n), block_(block) { schema_.tables = {{"t", 10}}; }
  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return bad_; }
  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    const uint64_t take = std::min<uint64_t>({max_samples, block_, n_ - next_});
    for (uint64_t i = 0; i < take; ++i, ++next_) {
      out->labels.push_back(static_cast<float>(next_));
      out->tables[0].AppendSingle(static_cast<RowId>(next_ % 10));
    }
    return Status::Ok();
  }

 private:
  uint64_t n_, next_ = 0;
  size_t block_;
  DatasetSchema schema_;
  BadRecords bad_;
};

std::vector<float> Drain(SampleReader& reader, size_t max) {
  std::vector<float> out;
  SampleBlock block;
  for (;;) {
    REQUIRE(reader.Next(max, &block).ok());
    if (block.empty()) return out;
    REQUIRE(block.size() <= max);
    for (size_t i = 0; i < block.size(); ++i) {
      // The table follows its sample.
      REQUIRE(block.tables[0].values[i] == static_cast<RowId>(static_cast<uint64_t>(block.labels[i]) % 10));
    }
    out.insert(out.end(), block.labels.begin(), block.labels.end());
  }
}

TEST_CASE("the window shuffle permutes within each window, whatever the block sizes", "[data]") {
  const uint64_t seed = GENERATE(take(4, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  const uint64_t n = 1 + rng() % 5000;
  const size_t window = 1 + rng() % 1500;
  const auto a = Drain(*ShuffleWindow(std::make_unique<Counting>(n, 1 + rng() % 300), window, seed), 1 + rng() % 700);
  const auto b = Drain(*ShuffleWindow(std::make_unique<Counting>(n, 1 + rng() % 300), window, seed), 1 + rng() % 700);
  REQUIRE(a == b);  // block sizes of reader and caller change nothing
  REQUIRE(a.size() == n);
  // Window w holds exactly the samples [w·window, (w+1)·window).
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(static_cast<size_t>(a[i]) / window == i / window);
  std::vector<float> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == static_cast<float>(i));
  if (window >= 8 && n >= 8) CHECK(a != sorted);  // shuffled
  const auto other = Drain(*ShuffleWindow(std::make_unique<Counting>(n, 97), window, seed + 1), 64);
  if (window >= 8 && n >= 8) CHECK(other != a);
}

}  // namespace
}  // namespace actorrec::data
