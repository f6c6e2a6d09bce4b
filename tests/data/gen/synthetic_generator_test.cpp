// SyntheticGenerator: deterministic per seed whatever the read sizes and
// threads, shaped like its options, with labels a model can learn.
#include "data/gen/synthetic_generator.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace actorrec::data;
using namespace actorrec::data::gen;

namespace {

// Multi-hot, sessions, distinct ids and every access kind: all the paths.
GeneratorOptions MixedOptions(uint64_t seed) {
  GeneratorOptions o;
  o.seed = seed;
  o.samples = 20000;
  o.num_dense = 5;
  o.session_length = 6;
  o.tables = {
      {"user", 200000, AccessDistribution::Zipf(1.1), BagLength::Fixed(1), false, 0.9},
      {"item", 5000, AccessDistribution::TopShare(0.01, 0.8), BagLength::Fixed(1), false, 0.1},
      {"history", 100000, AccessDistribution::Exponential(8), BagLength::Geometric(4), true, 0.5},
      {"tags", 300, AccessDistribution::HalfNormal(0.3), BagLength::Poisson(2), false, 0.0},
      {"misc", 70000, AccessDistribution::Uniform(), BagLength::Uniform(0, 3), true, 0.0},
  };
  return o;
}

SampleBlock ReadAll(GeneratorOptions options, size_t read_size, uint32_t threads) {
  options.threads = threads;
  auto gen = SyntheticGenerator::Open(options);
  REQUIRE(gen.ok());
  SampleBlock all, part;
  all.Reset((*gen)->schema());
  for (;;) {
    REQUIRE((*gen)->Next(read_size, &part).ok());
    if (part.empty()) break;
    REQUIRE(part.size() <= read_size);
    all.Append(part, 0, part.size());
  }
  return all;
}

}  // namespace

TEST_CASE("the same seed gives the same samples whatever the read size and thread count", "[data]") {
  const GeneratorOptions options = MixedOptions(11);
  const SampleBlock reference = ReadAll(options, 4096, 1);
  REQUIRE(reference.size() == options.samples);
  const size_t read_size = GENERATE(1000, 4096, 5000, 100000);
  const uint32_t threads = GENERATE(1, 3);
  CHECK(ReadAll(options, read_size, threads) == reference);
}

TEST_CASE("different seeds give different samples", "[data]") {
  CHECK_FALSE(ReadAll(MixedOptions(1), 4096, 1) == ReadAll(MixedOptions(2), 4096, 1));
}

TEST_CASE("generated samples fit their schema", "[data]") {
  const GeneratorOptions options = MixedOptions(5);
  const SampleBlock all = ReadAll(options, 7000, 1);
  REQUIRE(all.dense.size() == all.size() * options.num_dense);
  for (float x : all.dense) REQUIRE((x >= 0.0f && std::isfinite(x)));  // log(1 + count)
  for (float y : all.labels) REQUIRE((y == 0.0f || y == 1.0f));
  for (size_t t = 0; t < options.tables.size(); ++t) {
    const auto& table = all.tables[t];
    REQUIRE(table.offsets.size() == all.size() + 1);
    for (RowId id : table.values) REQUIRE(id < options.tables[t].rows);
  }
}

TEST_CASE("bags with distinct ids never repeat an id, even on a tiny table", "[data]") {
  GeneratorOptions o;
  o.samples = 3000;
  o.num_dense = 0;
  // Longer bags than rows, and a skew that makes redraws fail: cut to 4 ids.
  o.tables = {{"tiny", 4, AccessDistribution::Zipf(3.0), BagLength::Fixed(6), true, 0.0}};
  const SampleBlock all = ReadAll(o, 1000, 1);
  const auto& t = all.tables[0];
  for (size_t i = 0; i < all.size(); ++i) {
    std::vector<RowId> bag(t.values.begin() + t.offsets[i], t.values.begin() + t.offsets[i + 1]);
    REQUIRE(bag.size() == 4);
    std::sort(bag.begin(), bag.end());
    REQUIRE(std::adjacent_find(bag.begin(), bag.end()) == bag.end());
  }
}

TEST_CASE("multi-hot bag lengths in generated data follow their distribution's mean", "[data]") {
  GeneratorOptions o;
  o.samples = 100000;
  o.num_dense = 0;
  o.tables = {{"geo", 1000000, AccessDistribution::Uniform(), BagLength::Geometric(5), false, 0.0},
              {"poisson", 50000, AccessDistribution::Zipf(1.0), BagLength::Poisson(3), false, 0.0},
              {"uniform", 100000, AccessDistribution::Uniform(), BagLength::Uniform(1, 9), false, 0.0}};
  const SampleBlock all = ReadAll(o, 65536, 1);
  const double expected[] = {5.0, 3.0, 5.0};
  for (size_t t = 0; t < 3; ++t) {
    const double mean = static_cast<double>(all.tables[t].values.size()) / static_cast<double>(all.size());
    // Standard errors: sqrt(20 / 1e5) = 0.014 for the geometric, less for the others.
    CHECK(mean == Approx(expected[t]).margin(0.07));
  }
}

TEST_CASE("within a session a feature keeps its bag with probability d", "[data]") {
  GeneratorOptions o;
  o.samples = 80000;
  o.num_dense = 0;
  o.session_length = 8;
  o.tables = {{"user", 1000000, AccessDistribution::Uniform(), BagLength::Fixed(1), false, 0.9},
              {"item", 1000000, AccessDistribution::Uniform(), BagLength::Fixed(1), false, 0.1}};
  const SampleBlock all = ReadAll(o, 65536, 1);
  for (size_t t = 0; t < 2; ++t) {
    const auto& v = all.tables[t].values;
    uint64_t same_in_session = 0, pairs_in_session = 0, same_across = 0;
    for (size_t i = 1; i < all.size(); ++i) {
      if (i % 8 == 0) {
        same_across += v[i] == v[i - 1];
      } else {
        ++pairs_in_session;
        same_in_session += v[i] == v[i - 1];
      }
    }
    // 70 000 pairs: the standard error of the rate is below 0.002.
    CHECK(same_in_session / double(pairs_in_session) == Approx(o.tables[t].session_dup_prob).margin(0.01));
    CHECK(same_across == 0);  // a new session draws afresh (a repeat by chance is ~1e-6)
  }
}

TEST_CASE("within a session the dense features repeat with probability session_dense_dup, the rest unchanged",
          "[data][dedup]") {
  GeneratorOptions o = MixedOptions(3);
  const SampleBlock plain = ReadAll(o, 4096, 1);
  o.session_dense_dup_prob = 0.75;
  const SampleBlock dup = ReadAll(o, 4096, 1);
  const size_t F = o.num_dense;
  uint64_t same_in_session = 0, pairs_in_session = 0, same_across = 0;
  auto same_row = [&](const SampleBlock& b, size_t i) {
    return std::equal(b.dense.begin() + i * F, b.dense.begin() + (i + 1) * F, b.dense.begin() + (i - 1) * F);
  };
  for (size_t i = 1; i < dup.size(); ++i) {
    if (i % o.session_length == 0) {
      same_across += same_row(dup, i);
    } else {
      ++pairs_in_session;
      same_in_session += same_row(dup, i);
    }
  }
  CHECK(same_in_session / double(pairs_in_session) == Approx(0.75).margin(0.02));
  CHECK(same_across == 0);
  // The tables are drawn from their own streams: the same bags.
  for (size_t t = 0; t < o.tables.size(); ++t) CHECK(dup.tables[t].values == plain.tables[t].values);
}

TEST_CASE("the Criteo preset has Criteo Kaggle's shape", "[data]") {
  const GeneratorOptions full = CriteoKaggleOptions();
  REQUIRE(full.tables.size() == 26);
  CHECK(full.num_dense == 13);
  CHECK(full.samples == 45'840'617);
  uint64_t rows = 0;
  for (const auto& t : full.tables) rows += t.rows;
  CHECK(rows == 33'762'577);
  CHECK(full.tables[2].rows == 10'131'227);
  CHECK(full.tables[0].name == "C1");
  const DatasetSchema schema = SchemaOf(full);
  CHECK(schema.dense_names.front() == "I1");
  CHECK(schema.dense_names.back() == "I13");

  const GeneratorOptions small = CriteoKaggleOptions(0.001);
  CHECK(small.tables[2].rows == 10131);
  CHECK(small.tables[8].rows == 2);  // 3 rows scaled: at least 2
  CHECK(Validate(small).ok());
}

TEST_CASE("labels on the Criteo preset are learnable: Bayes-optimal AUC near 0.8", "[data]") {
  GeneratorOptions o = CriteoKaggleOptions();
  o.samples = 100000;
  auto gen = SyntheticGenerator::Open(o);
  REQUIRE(gen.ok());
  SampleBlock block;
  double positives = 0;
  uint64_t n = 0;
  for (;;) {
    REQUIRE((*gen)->Next(65536, &block).ok());
    if (block.empty()) break;
    positives += std::accumulate(block.labels.begin(), block.labels.end(), 0.0);
    n += block.size();
  }
  REQUIRE(n == o.samples);
  REQUIRE((*gen)->auc_samples() == n);
  const double auc = (*gen)->BayesAuc();
  INFO("Bayes-optimal AUC " << auc << ", click rate " << positives / n);
  CHECK((auc > 0.75 && auc < 0.85));
  // Labels are not constant, and the click rate is near base_ctr.
  CHECK(positives / n == Approx(o.base_ctr).margin(0.03));
}

TEST_CASE("with no signal no model beats chance", "[data]") {
  GeneratorOptions o = MixedOptions(3);
  o.signal = 0.0;
  o.samples = 50000;
  auto gen = SyntheticGenerator::Open(o);
  REQUIRE(gen.ok());
  SampleBlock block;
  REQUIRE((*gen)->Next(o.samples, &block).ok());
  // All probabilities tie at base_ctr: AUC exactly 1/2.
  CHECK((*gen)->BayesAuc() == Approx(0.5).margin(1e-12));
}

TEST_CASE("the Bayes AUC record stops at auc_sample_cap", "[data]") {
  GeneratorOptions o = MixedOptions(3);
  o.auc_sample_cap = 5000;
  auto gen = SyntheticGenerator::Open(o);
  REQUIRE(gen.ok());
  SampleBlock block;
  REQUIRE((*gen)->Next(12000, &block).ok());
  CHECK((*gen)->position() == 12000);
  CHECK((*gen)->auc_samples() == 5000);
  CHECK((*gen)->BayesAuc() > 0.5);
}

TEST_CASE("options out of range are refused with the option named", "[data]") {
  GeneratorOptions o = MixedOptions(1);
  SECTION("session length") { o.session_length = 0; }
  SECTION("duplication probability") { o.tables[0].session_dup_prob = 1.5; }
  SECTION("Zipf exponent") { o.tables[0].access = AccessDistribution::Zipf(0.0); }
  SECTION("top share") { o.tables[0].access = AccessDistribution::TopShare(0.0, 0.9); }
  SECTION("bag bounds") { o.tables[0].bag = BagLength::Uniform(5, 2); }
  SECTION("empty table") { o.tables[0].rows = 0; }
  SECTION("threads") { o.threads = 0; }
  auto gen = SyntheticGenerator::Open(o);
  REQUIRE_FALSE(gen.ok());
  CHECK(gen.status().code() == actorrec::Status::Code::kInvalidArgument);
  CHECK(gen.status().message().find("generator options") != std::string::npos);
}
