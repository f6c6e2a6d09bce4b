// ShardStore against a std::map model, lazy initialization, ownership and
// range errors, memory that follows touched rows, and the hash partition's
// balance; RowIndex and RowArena on their own.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "actors/embedding/row_arena.hpp"
#include "actors/embedding/row_index.hpp"
#include "actors/embedding/shard_store.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {
namespace {

void Init(uint32_t t, uint64_t r, float* out) {
  out[0] = static_cast<float>(t);
  out[1] = static_cast<float>(r);
  out[2] = -1.0f;
}

// The largest relative deviation of a shard's count from the mean, for
// `ids` spread over `shards`.
double Imbalance(const std::vector<std::pair<uint32_t, uint64_t>>& ids, uint32_t shards) {
  std::vector<double> count(shards);
  for (const auto& [t, r] : ids) count[ShardOf(t, r, shards)] += 1;
  const double mean = static_cast<double>(ids.size()) / shards;
  double worst = 0;
  for (double c : count) worst = std::max(worst, std::abs(c - mean) / mean);
  return worst;
}

}  // namespace

TEST_CASE("ShardOf spreads sequential, strided and skewed ids evenly", "[embedding]") {
  // 40000 ids over up to 16 shards: a fair multinomial's worst shard stays
  // within about 4 sigma = 4 * sqrt(16 / 40000) = 8 %; allow 10 %.
  for (uint32_t shards : {2u, 3u, 4u, 7u, 16u}) {
    INFO("shards " << shards);
    std::vector<std::pair<uint32_t, uint64_t>> sequential, strided, high_bits, many_tables, zipf_hot;
    for (uint64_t i = 0; i < 40000; ++i) {
      sequential.emplace_back(0, i);
      strided.emplace_back(1, i * shards * 1024);  // ids aligned to the shard count: modulo hashing fails here
      high_bits.emplace_back(2, i << 20);
      many_tables.emplace_back(static_cast<uint32_t>(i % 26), i / 26);  // small ids over 26 tables
    }
    // The distinct ids a Zipf(1.1)-skewed stream touches: the hot head is the
    // low ids of each table, which must not pile up on one shard.
    data::gen::Rng rng(shards);
    std::set<std::pair<uint32_t, uint64_t>> hot;
    while (hot.size() < 40000) {
      // Inverse CDF of a Pareto tail with exponent 1.1, cut at the table size.
      const double x = std::pow(rng.UniformOpenZero(), -1.0 / 0.1);
      if (x >= 33000000.0) continue;
      hot.emplace(static_cast<uint32_t>(rng.Below(4)), static_cast<uint64_t>(x));
    }
    zipf_hot.assign(hot.begin(), hot.end());
    CHECK(Imbalance(sequential, shards) < 0.10);
    CHECK(Imbalance(strided, shards) < 0.10);
    CHECK(Imbalance(high_bits, shards) < 0.10);
    CHECK(Imbalance(many_tables, shards) < 0.10);
    CHECK(Imbalance(zipf_hot, shards) < 0.10);
  }
  CHECK(ShardOf(3, 17, 1) == 0);
  // Fixed across builds and processes: pinned values.
  CHECK(ShardOf(0, 0, 1000) == ShardOf(0, 0, 1000));
  CHECK(ShardOf(5, 123456789, 64) < 64);
}

TEST_CASE("RowArena hands out stable rows and grows with them", "[embedding]") {
  RowArena arena(3);
  std::vector<const float*> where;
  for (uint32_t i = 0; i < 20000; ++i) {
    REQUIRE(arena.Append() == i);
    float* row = arena.At(i);
    for (int k = 0; k < 3; ++k) row[k] = static_cast<float>(i * 3 + k);
    where.push_back(row);
    // Never more than twice the rows (rounded up to the first chunk), or one
    // capped chunk beyond them.
    const size_t allocated = arena.memory_bytes() / (3 * sizeof(float));
    CHECK(allocated <= std::max<size_t>(2 * (i + 1), std::max<size_t>(RowArena::kFirstChunkRows,
                                                                        i + 1 + RowArena::kMaxChunkRows)));
  }
  for (uint32_t i = 0; i < 20000; ++i) {
    REQUIRE(arena.At(i) == where[i]);
    REQUIRE(arena.At(i)[2] == static_cast<float>(i * 3 + 2));
  }
  // Rows are disjoint: consecutive slots inside a chunk are `floats` apart.
  CHECK(arena.At(1) - arena.At(0) == 3);
}

TEST_CASE("RowIndex finds what was inserted, in both representations", "[embedding]") {
  for (uint64_t table_rows : {uint64_t{1000}, RowIndex::kDirectIndexMaxRows, uint64_t{33000000}}) {
    RowIndex index(table_rows);
    CHECK(index.direct() == (table_rows <= RowIndex::kDirectIndexMaxRows));
    std::map<uint32_t, uint32_t> model;
    data::gen::Rng rng(table_rows);
    for (uint32_t slot = 0; slot < 900; ++slot) {
      const auto row = static_cast<uint32_t>(rng.Below(table_rows));
      if (model.count(row)) continue;
      REQUIRE(index.Find(row) == RowIndex::kNoRow);
      index.Insert(row, slot);
      model[row] = slot;
    }
    CHECK(index.size() == model.size());
    for (const auto& [row, slot] : model) REQUIRE(index.Find(row) == slot);
    for (int probe = 0; probe < 1000; ++probe) {
      const auto row = static_cast<uint32_t>(rng.Below(table_rows));
      REQUIRE(index.Find(row) == (model.count(row) ? model[row] : RowIndex::kNoRow));
    }
    const auto entries = index.SortedEntries();
    CHECK(std::vector<std::pair<uint32_t, uint32_t>>(model.begin(), model.end()) == entries);
  }
}

TEST_CASE("ShardStore behaves like a map of rows with lazy initial values", "[embedding]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const uint32_t shards = 1 + static_cast<uint32_t>(seed % 4), shard = static_cast<uint32_t>(seed % shards);
    // One small (direct) and one huge (hashed) table.
    std::map<std::pair<uint32_t, uint32_t>, int> inits;
    ShardStore store(shard, shards, {50, 33000000}, RowFormat{2, 1}, [&](uint32_t t, uint64_t r, float* out) {
      ++inits[{t, static_cast<uint32_t>(r)}];
      Init(t, r, out);
    });
    std::map<std::pair<uint32_t, uint32_t>, std::vector<float>> model;
    data::gen::Rng rng(seed);
    for (int op = 0; op < 600; ++op) {
      // A batch of 1..4 rows, duplicates allowed.
      const size_t n = 1 + rng.Below(4);
      std::vector<uint32_t> t(n), r(n);
      bool all_owned = true;
      for (size_t i = 0; i < n; ++i) {
        t[i] = static_cast<uint32_t>(rng.Below(2));
        r[i] = static_cast<uint32_t>(rng.Below(t[i] == 0 ? 50 : 300));
        all_owned = all_owned && ShardOf(t[i], r[i], shards) == shard;
      }
      std::vector<float> rows(n * 3);
      const uint64_t digest_before = store.Digest();
      const size_t resident_before = store.resident_rows();
      const auto kind = rng.Below(4);
      Status st;
      if (kind == 0) {
        st = store.Fetch(t.data(), r.data(), n, rows.data());
      } else if (kind == 1) {
        for (float& x : rows) x = static_cast<float>(rng.Normal());
        st = store.Store(t.data(), r.data(), n, rows.data());
      } else if (kind == 2) {
        st = store.Update(t.data(), r.data(), n, [&](float* data, size_t i) { data[2] += 1.0f + static_cast<float>(i); });
      } else {
        st = store.Peek(t[0], r[0], rows.data());
      }
      const bool owned = kind == 3 ? ShardOf(t[0], r[0], shards) == shard : all_owned;
      REQUIRE(st.ok() == owned);
      if (!owned) {
        CHECK(st.code() == Status::Code::kInvalidArgument);
        CHECK_THAT(st.message(), Catch::Contains("belongs to shard"));
        CHECK(store.Digest() == digest_before);  // a refused call changes nothing
        CHECK(store.resident_rows() == resident_before);
        continue;
      }
      if (kind == 3) {
        const auto key = std::make_pair(t[0], r[0]);
        std::vector<float> expected = model.count(key) ? model[key] : std::vector<float>{float(t[0]), float(r[0]), -1};
        CHECK(std::vector<float>(rows.begin(), rows.begin() + 3) == expected);
        continue;
      }
      for (size_t i = 0; i < n; ++i) {
        const auto key = std::make_pair(t[i], r[i]);
        if (!model.count(key) && kind != 1) model[key] = {static_cast<float>(t[i]), static_cast<float>(r[i]), -1.0f};
        if (kind == 0) CHECK(std::vector<float>(rows.begin() + 3 * i, rows.begin() + 3 * i + 3) == model[key]);
        if (kind == 1) model[key].assign(rows.begin() + 3 * i, rows.begin() + 3 * i + 3);
        if (kind == 2) model[key][2] += 1.0f + static_cast<float>(i);
      }
    }
    CHECK(store.resident_rows() == model.size());
    for (const auto& [key, count] : inits) {
      // Created rows are initialized exactly once; Peek evaluates init for an
      // untouched row without keeping it, so only resident rows are counted.
      if (model.count(key)) CHECK(count >= 1);
    }
    auto it = model.begin();
    store.ForEachRow([&](uint32_t t, uint64_t r, const float* data) {
      REQUIRE(it != model.end());
      CHECK(it->first == std::make_pair(t, static_cast<uint32_t>(r)));
      CHECK(std::vector<float>(data, data + 3) == it->second);
      ++it;
    });
    CHECK(it == model.end());
  }
}

TEST_CASE("lazy init runs exactly once per created row, and never for a stored one", "[embedding]") {
  std::map<std::pair<uint32_t, uint64_t>, int> inits;
  ShardStore store(0, 1, {100, 1000000}, RowFormat{2, 1}, [&](uint32_t t, uint64_t r, float* out) {
    ++inits[{t, r}];
    Init(t, r, out);
  });
  const uint32_t t[] = {0, 1, 0, 1, 1}, r[] = {7, 999999, 7, 999999, 5};
  float out[15];
  REQUIRE(store.Fetch(t, r, 5, out).ok());
  REQUIRE(store.Fetch(t, r, 5, out).ok());
  REQUIRE(store.Update(t, r, 5, [](float* row, size_t) { row[0] += 1; }).ok());
  CHECK(inits == std::map<std::pair<uint32_t, uint64_t>, int>{{{0, 7}, 1}, {{1, 999999}, 1}, {{1, 5}, 1}});
  const uint32_t st[] = {0}, sr[] = {8};
  const float row[] = {1, 2, 3};
  REQUIRE(store.Store(st, sr, 1, row).ok());
  CHECK(inits.count({0, 8}) == 0);
  REQUIRE(store.Fetch(st, sr, 1, out).ok());
  CHECK(std::vector<float>(out, out + 3) == std::vector<float>{1, 2, 3});
  // Update saw duplicates in order: row (0, 7) incremented twice.
  REQUIRE(store.Fetch(t, r, 1, out).ok());
  CHECK(out[0] == 2.0f);
}

TEST_CASE("ShardStore refuses rows out of range or of another shard, changing nothing", "[embedding]") {
  ShardStore store(0, 2, {10, 100000}, RowFormat{2, 1}, Init);
  float out[6];
  SECTION("row out of range") {
    uint32_t t = 0, r = 10;
    auto st = store.Fetch(&t, &r, 1, out);
    CHECK(st.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("row (0, 10) is out of range"));
  }
  SECTION("table out of range") {
    uint32_t t = 2, r = 0;
    CHECK_THAT(store.Update(&t, &r, 1, [](float*, size_t) {}).message(), Catch::Contains("row (2, 0) is out of range"));
  }
  SECTION("a bad row after a good one: the good one is not created") {
    uint32_t good = 0;
    while (ShardOf(0, good, 2) != 0) ++good;
    uint32_t bad = 0;
    while (ShardOf(0, bad, 2) == 0) ++bad;
    const uint32_t t[] = {0, 0}, r[] = {good, bad};
    auto st = store.Fetch(t, r, 2, out);
    CHECK_THAT(st.message(), Catch::Contains("row (0, " + std::to_string(bad) + ") belongs to shard 1"));
    const float in[6] = {};
    CHECK_FALSE(store.Store(t, r, 2, in).ok());
    CHECK_FALSE(store.Peek(0, bad, out).ok());
  }
  CHECK(store.resident_rows() == 0);
}

TEST_CASE("memory follows the touched rows, not the table size", "[embedding]") {
  const RowFormat format{64, 64};
  ShardStore store(1, 4, {33000000, 33000000, 1000}, format, [](uint32_t, uint64_t, float* out) {
    std::memset(out, 0, 128 * sizeof(float));
  });
  const size_t empty = store.memory_bytes();
  CHECK(empty < 16 * 1024);  // two 16-bucket maps and a 1000-entry direct array
  std::vector<uint32_t> t, r;
  data::gen::Rng rng(7);
  while (t.size() < 1000) {
    const auto row = static_cast<uint32_t>(rng.Below(33000000));
    if (ShardOf(0, row, 4) != 1) continue;
    t.push_back(0);
    r.push_back(row);
  }
  std::vector<float> out(1000 * 128);
  REQUIRE(store.Fetch(t.data(), r.data(), 1000, out.data()).ok());
  CHECK(store.resident_rows() <= 1000);
  // 1000 rows of 512 bytes are 512 KB; the arena holds at most twice that
  // and the index 16 bytes per row.
  const size_t rows_bytes = store.resident_rows() * 128 * sizeof(float);
  CHECK(store.memory_bytes() >= rows_bytes);
  CHECK(store.memory_bytes() < 2 * rows_bytes + 64 * 1024);
}

TEST_CASE("Digest sees every byte and every position, in any creation order", "[embedding]") {
  const auto make = [] { return ShardStore(0, 1, {10, 100000}, RowFormat{2, 1}, Init); };
  ShardStore a = make(), b = make();
  const uint32_t t1[] = {0, 1, 1}, r1[] = {4, 77777, 3};
  const uint32_t t2[] = {1, 1, 0}, r2[] = {3, 77777, 4};
  float out[9];
  REQUIRE(a.Fetch(t1, r1, 3, out).ok());
  REQUIRE(b.Fetch(t2, r2, 3, out).ok());
  CHECK(a.Digest() == b.Digest());

  const uint32_t t = 0, r = 4;
  float row[3] = {0.0f, 4.0f, -1.0f};
  row[0] = -0.0f;  // bitwise different from b's 0.0f
  REQUIRE(a.Store(&t, &r, 1, row).ok());
  CHECK(a.Digest() != b.Digest());
  row[0] = 0.0f;
  REQUIRE(a.Store(&t, &r, 1, row).ok());
  CHECK(a.Digest() == b.Digest());

  // The same values under another row id differ.
  ShardStore c = make(), d = make();
  const uint32_t tc = 0, rc = 5, rd = 6;
  const float same[3] = {1, 2, 3};
  REQUIRE(c.Store(&tc, &rc, 1, same).ok());
  REQUIRE(d.Store(&tc, &rd, 1, same).ok());
  CHECK(c.Digest() != d.Digest());
}

}  // namespace actorrec::embedding
