// BagOffsets: the compact form of single-hot offsets reads, compares and
// changes exactly as the offsets written out would.
#include "data/bag_offsets.hpp"

#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "data/sample_block.hpp"

using actorrec::data::BagOffsets;
using actorrec::data::SampleBlock;

namespace {

std::vector<uint32_t> Iota(size_t bags) {
  std::vector<uint32_t> v(bags + 1);
  std::iota(v.begin(), v.end(), uint32_t{0});
  return v;
}

std::vector<uint32_t> Contents(const BagOffsets& o) { return {o.begin(), o.end()}; }

}  // namespace

TEST_CASE("BagOffsets starts as no bags and stays compact while bags hold one id", "[data]") {
  BagOffsets o;
  CHECK(o.compact());
  CHECK(Contents(o) == std::vector<uint32_t>{0});
  for (uint32_t k = 1; k <= 5; ++k) o.push_back(k);  // five bags of one id
  CHECK(o.compact());
  CHECK(o.size() == 6);
  CHECK(o[3] == 3);
  CHECK(o.back() == 5);
  CHECK(Contents(o) == Iota(5));
  o.push_back(7);  // a bag of two ids: written out from here on
  CHECK_FALSE(o.compact());
  CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 7});
}

TEST_CASE("BagOffsets writes the compact form out before any other change", "[data]") {
  BagOffsets o;
  o.SetSingleHot(4);
  SECTION("assigning through operator[]") {
    o[2] = 1;
    CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 1, 3, 4});
  }
  SECTION("back()") {
    o.back() += 1;
    CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 2, 3, 5});
  }
  SECTION("resize") {
    o.resize(7, 4);
    CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 2, 3, 4, 4, 4});
  }
  SECTION("append") {
    const uint32_t more[] = {6, 9};
    o.append(more, more + 2);
    CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 2, 3, 4, 6, 9});
  }
  SECTION("a push that is not one more single-id bag") {
    o.push_back(4);  // an empty bag
    CHECK(Contents(o) == std::vector<uint32_t>{0, 1, 2, 3, 4, 4});
  }
  CHECK_FALSE(o.compact());
}

TEST_CASE("BagOffsets compares by content, compact or not", "[data]") {
  BagOffsets compact, written;
  compact.SetSingleHot(3);
  written = {0, 1, 2, 3};
  CHECK_FALSE(written.compact());
  CHECK(compact == written);
  CHECK(written == compact);
  CHECK(compact == Iota(3));
  written = {0, 1, 1, 3};
  CHECK_FALSE(compact == written);
  BagOffsets other;
  other.SetSingleHot(2);
  CHECK_FALSE(compact == other);
  // SampleBlock's equality goes through it: a block read back compact
  // equals the block that was built bag by bag.
  SampleBlock a, b;
  a.Reset(0, 1);
  b.Reset(0, 1);
  a.tables[0].values = b.tables[0].values = {4, 5};
  a.tables[0].offsets.SetSingleHot(2);
  b.tables[0].offsets = {0, 1, 2};
  a.labels = b.labels = {0, 1};
  CHECK(a == b);
}

TEST_CASE("BagOffsets swaps contents, compact form included, as vectors do", "[data]") {
  BagOffsets compact;
  compact.SetSingleHot(3);
  BagOffsets written{0, 2, 2, 5};
  compact.swap(written);
  CHECK_FALSE(compact.compact());
  CHECK(compact == std::vector<uint32_t>{0, 2, 2, 5});
  CHECK(written.compact());
  CHECK(written == Iota(3));
  written.swap(written);  // with itself: unchanged
  CHECK(written.compact());
  CHECK(written == Iota(3));
}

TEST_CASE("BagOffsets keeps the compact form up to its shared table and writes out beyond", "[data]") {
  BagOffsets o;
  o.SetSingleHot(BagOffsets::kMaxCompactBags);
  CHECK(o.compact());
  CHECK(o.back() == BagOffsets::kMaxCompactBags);
  CHECK(o.data()[BagOffsets::kMaxCompactBags] == BagOffsets::kMaxCompactBags);
  o.push_back(static_cast<uint32_t>(BagOffsets::kMaxCompactBags + 1));
  CHECK_FALSE(o.compact());
  CHECK(o.size() == BagOffsets::kMaxCompactBags + 2);
  CHECK(o.back() == BagOffsets::kMaxCompactBags + 1);
  BagOffsets big;
  big.SetSingleHot(BagOffsets::kMaxCompactBags + 3);
  CHECK_FALSE(big.compact());
  CHECK(big.size() == BagOffsets::kMaxCompactBags + 4);
  CHECK(big[BagOffsets::kMaxCompactBags + 2] == BagOffsets::kMaxCompactBags + 2);
}

TEST_CASE("SampleBlock::Append keeps single-hot tables compact and joins them with multi-hot ones", "[data]") {
  SampleBlock single, multi, dst;
  single.Reset(0, 1);
  for (uint32_t i = 0; i < 6; ++i) {
    single.labels.push_back(0);
    single.tables[0].AppendSingle(10 + i);
  }
  CHECK(single.tables[0].offsets.compact());
  dst.Reset(0, 1);
  dst.Append(single, 1, 4);
  CHECK(dst.tables[0].offsets.compact());
  CHECK(dst.tables[0].values == std::vector<uint32_t>{11, 12, 13});
  CHECK(dst.tables[0].offsets == Iota(3));
  multi.Reset(0, 1);
  multi.labels = {0, 0};
  multi.tables[0].values = {7, 8, 9};
  multi.tables[0].offsets = {0, 2, 3};
  dst.Append(multi, 0, 2);
  dst.Append(single, 5, 6);
  CHECK_FALSE(dst.tables[0].offsets.compact());
  CHECK(dst.tables[0].values == std::vector<uint32_t>{11, 12, 13, 7, 8, 9, 15});
  CHECK(dst.tables[0].offsets == std::vector<uint32_t>{0, 1, 2, 3, 5, 6, 7});
}
