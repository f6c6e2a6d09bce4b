// SampleBlock: appending sample ranges keeps bags and dense rows aligned.
#include "data/sample_block.hpp"

#include <catch2/catch.hpp>

using actorrec::data::SampleBlock;

TEST_CASE("appending a range of samples copies their labels, dense rows and bags", "[data]") {
  SampleBlock src;
  src.Reset(2, 1);
  // three samples with bags {5}, {}, {7, 8}
  src.labels = {1, 0, 1};
  src.dense = {0.1f, 0.2f, 1.1f, 1.2f, 2.1f, 2.2f};
  src.tables[0].values = {5, 7, 8};
  src.tables[0].offsets = {0, 1, 1, 3};
  SampleBlock dst;
  dst.Reset(2, 1);
  dst.Append(src, 1, 3);
  REQUIRE(dst.size() == 2);
  REQUIRE(dst.labels == std::vector<float>{0, 1});
  REQUIRE(dst.dense == std::vector<float>{1.1f, 1.2f, 2.1f, 2.2f});
  REQUIRE(dst.tables[0].values == std::vector<uint32_t>{7, 8});
  REQUIRE(dst.tables[0].offsets == std::vector<uint32_t>{0, 0, 2});
  dst.Append(src, 0, 1);
  REQUIRE(dst.tables[0].offsets == std::vector<uint32_t>{0, 0, 2, 3});
  REQUIRE(dst.tables[0].values == std::vector<uint32_t>{7, 8, 5});
}
