// Crossed-feature columns (data/crosses.hpp): the documented hash on cases
// computed by hand (an independent Python SplitMix64), the Cartesian product
// of bags with empty and single-id bags, the schema, and the errors.
#include "data/crosses.hpp"

#include <catch2/catch.hpp>

#include <vector>

#include "tests/data/counting_reader.hpp"

namespace actorrec::data {
namespace {

RowId Cross(std::vector<RowId> ids, uint64_t buckets) { return CrossId(ids, buckets); }

// A block of one table per bag list (each a sample's bag), no dense.
SampleBlock BlockOf(const std::vector<std::vector<std::vector<RowId>>>& tables) {
  SampleBlock block;
  block.Reset(0, tables.size());
  for (size_t t = 0; t < tables.size(); ++t) {
    for (const auto& bag : tables[t]) {
      for (RowId r : bag) block.tables[t].values.push_back(r);
      block.tables[t].CloseBag();
    }
  }
  block.labels.assign(tables[0].size(), 0.0f);
  return block;
}

std::vector<RowId> BagOf(const SampleBlock::Table& table, size_t i) {
  return {table.values.begin() + table.offsets[i], table.values.begin() + table.offsets[i + 1]};
}

}  // namespace

TEST_CASE("a cross id is the documented hash of the ids in table order, modulo the buckets", "[data]") {
  // h = 0; h = Mix64(h ^ Mix64(id + 0x9e3779b97f4a7c15)) per id; id = h mod
  // buckets: the values below were computed apart, in Python.
  CHECK(Cross({0, 0}, 1000003) == 809460);    // h = 0x3b9d11eb55856baf
  CHECK(Cross({1, 2}, 1000003) == 502747);    // h = 0xfb5dfd0ed34747d9
  CHECK(Cross({2, 1}, 1000003) == 374454);    // the order of the tables matters
  CHECK(Cross({7, 3, 5}, 97) == 37);          // three tables
  CHECK(Cross({4294967295u, 0}, 4294967295u) == 3627250521u);  // the largest id and bucket count
  CHECK(Cross({5, 9}, 2) == 1);
}

TEST_CASE("crossed bags are the Cartesian product of the tables' bags, the first table outermost", "[data]") {
  // Three samples: bags of 2 × 3 ids, an empty bag, and single ids.
  SampleBlock block = BlockOf({{{1, 2}, {}, {4}}, {{10, 11, 12}, {5}, {6}}, {{0}, {0}, {0}}});
  const std::vector<CrossSpec> crosses = {{{0, 1}, 1000, "model.crosses[0]"}, {{2, 1}, 7, "model.crosses[1]"}};
  REQUIRE(AppendCrosses(crosses, &block).ok());
  REQUIRE(block.tables.size() == 5);
  CHECK(BagOf(block.tables[3], 0) == std::vector<RowId>{Cross({1, 10}, 1000), Cross({1, 11}, 1000),
                                                        Cross({1, 12}, 1000), Cross({2, 10}, 1000),
                                                        Cross({2, 11}, 1000), Cross({2, 12}, 1000)});
  CHECK(BagOf(block.tables[3], 1).empty());  // an empty bag crosses to nothing
  CHECK(BagOf(block.tables[3], 2) == std::vector<RowId>{Cross({4, 6}, 1000)});
  CHECK(BagOf(block.tables[4], 0) == std::vector<RowId>{Cross({0, 10}, 7), Cross({0, 11}, 7), Cross({0, 12}, 7)});
  CHECK(BagOf(block.tables[4], 2) == std::vector<RowId>{Cross({0, 6}, 7)});
  for (RowId r : block.tables[4].values) CHECK(r < 7);
  // The data's own tables are untouched.
  CHECK(BagOf(block.tables[0], 0) == std::vector<RowId>{1, 2});
  // Single-id bags everywhere keep the compact offsets.
  SampleBlock single = BlockOf({{{3}, {4}}, {{5}, {6}}});
  REQUIRE(AppendCrosses(std::span<const CrossSpec>(crosses).subspan(0, 1), &single).ok());
  CHECK(single.tables[2].offsets.compact());
  CHECK(single.tables[2].values == std::vector<RowId>{Cross({3, 5}, 1000), Cross({4, 6}, 1000)});
}

TEST_CASE("a sample whose crossed bags multiply past the limit is an error naming the cross", "[data]") {
  std::vector<RowId> big(300);
  SampleBlock block = BlockOf({{big}, {big}});  // 90,000 combinations
  const std::vector<CrossSpec> crosses = {{{0, 1}, 1000, "model.crosses[3]"}};
  const Status st = AppendCrosses(crosses, &block);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("model.crosses[3]") && Catch::Contains("65536"));
}

TEST_CASE("a crossed reader appends a table per cross to the schema and to every block", "[data]") {
  auto inner = std::make_unique<testing::CountingReader>(25, 10);  // one table "t" of 10 rows
  auto wrong = Crossed(std::make_unique<testing::CountingReader>(5, 5), {{{0, 1}, 50, "model.crosses[0]"}}, "data.csv");
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.status().message(), Catch::Contains("model.crosses[0].tables: table 1 does not exist: data.csv "
                                                       "has 1 tables, 0 to 0"));

  // A cross of a table with itself is refused by the config; here it shows
  // the reader at work on a one-table source.
  auto crossed = Crossed(std::move(inner), {{{0, 0}, 50, "model.crosses[0]"}}, "data.csv");
  REQUIRE(crossed.ok());
  const DatasetSchema& schema = (*crossed)->schema();
  REQUIRE(schema.num_tables() == 2);
  CHECK(schema.tables[1].name == "t_x_t");
  CHECK(schema.tables[1].rows == 50);
  SampleBlock block;
  REQUIRE((*crossed)->Next(10, &block).ok());
  REQUIRE(block.tables.size() == 2);
  for (size_t i = 0; i < block.size(); ++i) {
    const RowId r = block.tables[0].values[i];
    CHECK(BagOf(block.tables[1], i) == std::vector<RowId>{Cross({r, r}, 50)});
  }
  // Without crosses the reader is the source itself.
  auto source = std::make_unique<testing::CountingReader>(5, 5);
  SampleReader* raw = source.get();
  CHECK(Crossed(std::move(source), {}, "data.csv").value().get() == raw);
}

}  // namespace actorrec::data
