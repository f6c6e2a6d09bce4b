// ComputeStats against a direct count with std containers.
#include "data/stats/dataset_stats.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "tests/data/stats/memory_reader.hpp"

using namespace actorrec::data;
using namespace actorrec::data::stats;
using actorrec::testing::MemoryReader;

namespace {

// Random bags of 0..3 ids over two small skewed tables, so that ties,
// empty bags and repeated bags all occur.
SampleBlock RandomBlock(const DatasetSchema& schema, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  SampleBlock b;
  b.Reset(schema);
  for (size_t i = 0; i < n; ++i) {
    b.labels.push_back(static_cast<float>(rng() % 3 == 0));
    for (size_t t = 0; t < schema.num_tables(); ++t) {
      const uint32_t rows = static_cast<uint32_t>(schema.tables[t].rows);
      const uint32_t length = t == 0 ? 1 : rng() % 4;
      for (uint32_t k = 0; k < length; ++k) {
        const uint32_t a = rng() % rows, c = rng() % rows;
        b.tables[t].values.push_back(std::min(a, c));  // skewed towards low ids
      }
      b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].values.size()));
    }
  }
  return b;
}

// The expected TableStats, the slow and obvious way.
TableStats Direct(const SampleBlock& b, size_t t, uint64_t rows, uint64_t batch, const StatsOptions& o) {
  TableStats s;
  const auto& table = b.tables[t];
  std::map<RowId, uint64_t> count;
  for (RowId id : table.values) ++count[id];
  s.accesses = table.values.size();
  s.distinct_rows = count.size();
  std::vector<std::pair<uint64_t, RowId>> order;  // (-count, id): hottest first, lower ids first on ties
  for (auto [id, c] : count) order.push_back({c, id});
  std::sort(order.begin(), order.end(), [](auto x, auto y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  auto top_sum = [&](uint64_t k) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(k, order.size()); ++i) sum += order[i].first;
    return sum;
  };
  for (double f : o.top_fractions) {
    s.top_share_of_rows.push_back(double(top_sum(static_cast<uint64_t>(std::ceil(f * rows - 1e-9)))) / s.accesses);
    s.top_share_of_seen.push_back(double(top_sum(static_cast<uint64_t>(std::ceil(f * s.distinct_rows - 1e-9)))) / s.accesses);
  }
  uint64_t unique_rows = 0, unique_bags = 0, batches = 0;
  std::vector<std::set<RowId>> batch_rows;
  for (size_t begin = 0; begin < b.size(); begin += batch, ++batches) {
    std::set<RowId> rows_in_batch;
    std::set<std::vector<RowId>> bags;
    for (size_t i = begin; i < std::min(b.size(), begin + batch); ++i) {
      std::vector<RowId> bag(table.values.begin() + table.offsets[i], table.values.begin() + table.offsets[i + 1]);
      rows_in_batch.insert(bag.begin(), bag.end());
      bags.insert(bag);
    }
    unique_rows += rows_in_batch.size();
    unique_bags += bags.size();
    batch_rows.push_back(rows_in_batch);
  }
  s.mean_unique_rows_per_batch = double(unique_rows) / batches;
  s.coalescing_ratio = double(unique_rows) / s.accesses;
  s.dedupe_factor = double(b.size()) / unique_bags;
  for (double f : o.cache_fractions) {
    const uint64_t k = static_cast<uint64_t>(std::ceil(f * rows - 1e-9));
    std::set<RowId> cache;
    for (uint64_t i = 0; i < std::min<uint64_t>(k, order.size()); ++i) cache.insert(order[i].second);
    uint64_t hits = 0;
    for (const auto& rows_in_batch : batch_rows)
      for (RowId id : rows_in_batch) hits += cache.count(id);
    s.cache_hit_rate.push_back(double(hits) / unique_rows);
  }
  return s;
}

}  // namespace

TEST_CASE("ComputeStats agrees with a direct count", "[data]") {
  const uint32_t seed = GENERATE(take(6, random(1, 1000000)));
  const uint64_t batch = GENERATE(1, 7, 64, 1000);
  DatasetSchema schema;
  schema.tables = {{"single", 300}, {"multi", 50}};
  const SampleBlock block = RandomBlock(schema, 900, seed);
  StatsOptions o;
  o.batch_size = batch;
  o.top_fractions = {0.01, 0.1};
  o.cache_fractions = {0.01, 0.05, 0.5, 1.0};
  MemoryReader reader(schema, block, {100, 1, 333});
  auto stats = ComputeStats(reader, o);
  REQUIRE(stats.ok());
  CHECK(stats->samples == 900);
  CHECK(stats->batches == (900 + batch - 1) / batch);
  double positives = 0;
  for (float y : block.labels) positives += y;
  CHECK(stats->positive_rate == Approx(positives / 900));
  for (size_t t = 0; t < 2; ++t) {
    const TableStats want = Direct(block, t, schema.tables[t].rows, batch, o);
    const TableStats& got = stats->tables[t];
    INFO("table " << t << ", batch " << batch);
    CHECK(got.name == schema.tables[t].name);
    CHECK(got.bags == 900);
    CHECK(got.accesses == want.accesses);
    CHECK(got.distinct_rows == want.distinct_rows);
    for (size_t f = 0; f < 2; ++f) {
      CHECK(got.top_share_of_rows[f] == Approx(want.top_share_of_rows[f]));
      CHECK(got.top_share_of_seen[f] == Approx(want.top_share_of_seen[f]));
    }
    CHECK(got.mean_unique_rows_per_batch == Approx(want.mean_unique_rows_per_batch));
    CHECK(got.coalescing_ratio == Approx(want.coalescing_ratio));
    CHECK(got.dedupe_factor == Approx(want.dedupe_factor));
    CHECK(std::isnan(got.dedupe_factor_model));
    for (size_t c = 0; c < o.cache_fractions.size(); ++c) CHECK(got.cache_hit_rate[c] == Approx(want.cache_hit_rate[c]));
  }
}

TEST_CASE("ComputeStats stops at max_samples", "[data]") {
  DatasetSchema schema;
  schema.tables = {{"t", 10}};
  MemoryReader reader(schema, RandomBlock(schema, 500, 1));
  StatsOptions o;
  o.max_samples = 123;
  o.batch_size = 50;
  auto stats = ComputeStats(reader, o);
  REQUIRE(stats.ok());
  CHECK(stats->samples == 123);
  CHECK(stats->batches == 3);
}

TEST_CASE("a row id past its table is an error naming the table", "[data]") {
  DatasetSchema schema;
  schema.tables = {{"small", 4}};
  SampleBlock block;
  block.Reset(schema);
  block.labels = {0, 1};
  block.tables[0].values = {1, 4};
  block.tables[0].offsets = {0, 1, 2};
  MemoryReader reader(schema, block);
  auto stats = ComputeStats(reader);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == actorrec::Status::Code::kInvalidArgument);
  CHECK(stats.status().message().find("'small'") != std::string::npos);
  CHECK(stats.status().message().find("row 4") != std::string::npos);
}

TEST_CASE("stats options out of range are refused", "[data]") {
  DatasetSchema schema;
  schema.tables = {{"t", 10}};
  MemoryReader reader(schema, RandomBlock(schema, 10, 1));
  StatsOptions o;
  SECTION("batch size") { o.batch_size = 0; }
  SECTION("fraction") { o.top_fractions = {0.0}; }
  SECTION("cache fraction") { o.cache_fractions = {1.5}; }
  SECTION("session model of the wrong width") {
    o.session_length = 4;
    o.session_dup_prob = {0.5, 0.5};
  }
  auto stats = ComputeStats(reader, o);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == actorrec::Status::Code::kInvalidArgument);
}

TEST_CASE("tables too large to count are refused before counting", "[data]") {
  DatasetSchema schema;
  schema.tables = {{"huge", uint64_t{1} << 32}};
  MemoryReader reader(schema, SampleBlock{});
  StatsOptions o;
  o.max_count_bytes = uint64_t{1} << 30;
  auto stats = ComputeStats(reader, o);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == actorrec::Status::Code::kNotSupported);
}
