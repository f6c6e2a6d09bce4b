// ShardStore against a std::map model, lazy initialization, ownership and
// range errors, and the hash partition's balance.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "actors/embedding/shard_store.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {
namespace {

void Init(uint32_t t, uint64_t r, float* out) {
  out[0] = static_cast<float>(t);
  out[1] = static_cast<float>(r);
  out[2] = -1.0f;
}

}  // namespace

TEST_CASE("ShardOf spreads sequential and skewed ids evenly", "[embedding]") {
  std::vector<int> count(4);
  for (uint64_t r = 0; r < 40000; ++r) ++count[ShardOf(0, r, 4)];
  for (int c : count) CHECK(std::abs(c - 10000) < 500);
  CHECK(ShardOf(3, 17, 1) == 0);
}

TEST_CASE("ShardStore behaves like a map of rows with lazy initial values", "[embedding]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const uint32_t shards = 3, shard = static_cast<uint32_t>(seed % 3);
    ShardStore store(shard, shards, {50, 33000000}, RowFormat{2, 1}, Init);
    std::map<std::pair<uint32_t, uint32_t>, std::vector<float>> model;
    data::gen::Rng rng(seed);
    for (int op = 0; op < 400; ++op) {
      uint32_t t = static_cast<uint32_t>(rng.Below(2)), r = static_cast<uint32_t>(rng.Below(t == 0 ? 50 : 1000));
      if (ShardOf(t, r, shards) != shard) {
        float out[3];
        CHECK_FALSE(store.Fetch(&t, &r, 1, out).ok());
        continue;
      }
      auto key = std::make_pair(t, r);
      if (!model.count(key)) model[key] = {static_cast<float>(t), static_cast<float>(r), -1.0f};
      float row[3];
      switch (rng.Below(3)) {
        case 0:
          REQUIRE(store.Fetch(&t, &r, 1, row).ok());
          CHECK(std::vector<float>(row, row + 3) == model[key]);
          break;
        case 1:
          for (float& x : row) x = static_cast<float>(rng.Normal());
          REQUIRE(store.Store(&t, &r, 1, row).ok());
          model[key].assign(row, row + 3);
          break;
        default:
          REQUIRE(store.Update(&t, &r, 1, [](float* data, size_t) { data[2] += 1.0f; }).ok());
          model[key][2] += 1.0f;
      }
    }
    CHECK(store.resident_rows() == model.size());
    auto it = model.begin();
    store.ForEachRow([&](uint32_t t, uint64_t r, const float* data) {
      REQUIRE(it != model.end());
      CHECK(it->first == std::make_pair(t, static_cast<uint32_t>(r)));
      CHECK(std::vector<float>(data, data + 3) == it->second);
      ++it;
    });
    CHECK(it == model.end());
    // A 33 M-row table costs only the touched rows.
    CHECK(store.memory_bytes() < 1u << 20);
  }
}

TEST_CASE("ShardStore refuses rows out of range or of another shard, changing nothing", "[embedding]") {
  ShardStore store(0, 2, {10}, RowFormat{2, 1}, Init);
  uint32_t t = 0, r = 10;
  float out[3];
  auto st = store.Fetch(&t, &r, 1, out);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("row (0, 10) is out of range"));
  r = 0;
  while (ShardOf(0, r, 2) == 0) ++r;
  st = store.Fetch(&t, &r, 1, out);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("belongs to shard 1"));
  CHECK(store.resident_rows() == 0);
}

TEST_CASE("Peek reads without creating, and Digest sees every byte", "[embedding]") {
  ShardStore a(0, 1, {10}, RowFormat{2, 1}, Init), b(0, 1, {10}, RowFormat{2, 1}, Init);
  uint32_t t = 0, r = 4;
  float out[3];
  REQUIRE(a.Peek(0, 4, out).ok());
  CHECK(out[1] == 4.0f);
  CHECK(a.resident_rows() == 0);
  REQUIRE(a.Fetch(&t, &r, 1, out).ok());
  REQUIRE(b.Fetch(&t, &r, 1, out).ok());
  CHECK(a.Digest() == b.Digest());
  out[2] = -0.0f;  // only the sign bit differs from b
  out[2] = out[2] == 0.0f ? -0.0f : out[2];
  float row[3] = {0.0f, 4.0f, 1.0f};
  REQUIRE(a.Store(&t, &r, 1, row).ok());
  CHECK(a.Digest() != b.Digest());
}

}  // namespace actorrec::embedding
