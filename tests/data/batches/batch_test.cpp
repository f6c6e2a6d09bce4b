// KJT <-> IKJT: dedup and the jagged index-select undo each other exactly,
// on random multi-hot batches with heavy duplication and random groupings.
#include "data/batches/batch.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

using namespace actorrec::data;

namespace {

// A batch of `samples` samples over `tables` tables whose bags repeat often:
// ids from a tiny range, lengths 0..3.
std::vector<SampleBlock::Table> RandomKjt(std::mt19937_64& rng, size_t samples, size_t tables) {
  std::vector<SampleBlock::Table> kjt(tables);
  for (auto& t : kjt) {
    for (size_t i = 0; i < samples; ++i) {
      const int len = static_cast<int>(rng() % 4);
      for (int k = 0; k < len; ++k) t.values.push_back(static_cast<RowId>(rng() % 3));
      t.offsets.push_back(static_cast<uint32_t>(t.values.size()));
    }
  }
  return kjt;
}

std::vector<std::vector<uint32_t>> RandomGroups(std::mt19937_64& rng, size_t tables) {
  std::vector<uint32_t> order(tables);
  for (size_t t = 0; t < tables; ++t) order[t] = static_cast<uint32_t>(t);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::vector<uint32_t>> groups;
  for (size_t i = 0; i < tables;) {
    const size_t n = 1 + rng() % 3;
    groups.emplace_back(order.begin() + i, order.begin() + std::min(tables, i + n));
    i += n;
  }
  return groups;
}

}  // namespace

TEST_CASE("the jagged index-select concatenates the chosen bags in order", "[data]") {
  SampleBlock::Table bags;
  bags.values = {1, 2, 3, 4, 5};
  bags.offsets = {0, 2, 2, 5};  // {1,2} {} {3,4,5}
  SampleBlock::Table out;
  JaggedIndexSelect(bags, {2, 0, 1, 0}, &out);
  REQUIRE(out.values == std::vector<RowId>{3, 4, 5, 1, 2, 1, 2});
  REQUIRE(out.offsets == std::vector<uint32_t>{0, 3, 5, 5, 7});
}

TEST_CASE("a group deduplicates whole bag tuples in order of first use", "[data]") {
  // Two tables, four samples: tuples ({7},{1}), ({7},{2}), ({7},{1}), ({},{1}).
  std::vector<SampleBlock::Table> kjt(2);
  kjt[0].values = {7, 7, 7};
  kjt[0].offsets = {0, 1, 2, 3, 3};
  kjt[1].values = {1, 2, 1, 1};
  kjt[1].offsets = {0, 1, 2, 3, 4};
  auto together = Deduplicate(kjt, {{0, 1}});
  REQUIRE(together.groups.size() == 1);
  REQUIRE(together.groups[0].inverse == std::vector<uint32_t>{0, 1, 0, 2});
  REQUIRE(together.groups[0].unique[0].values == std::vector<RowId>{7, 7});
  REQUIRE(together.groups[0].unique[1].values == std::vector<RowId>{1, 2, 1});
  auto apart = Deduplicate(kjt, SingletonGroups(2));
  REQUIRE(apart.groups[0].inverse == std::vector<uint32_t>{0, 0, 0, 1});
  REQUIRE(apart.groups[1].inverse == std::vector<uint32_t>{0, 1, 0, 0});
  REQUIRE(DedupFactor(kjt, apart) == Approx(7.0 / 3.0));
}

TEST_CASE("bags split differently across tables are different tuples", "[data]") {
  std::vector<SampleBlock::Table> kjt(2);
  kjt[0].values = {1, 1, 2};  // sample 0: {1} {2,3}; sample 1: {1,2} {3}
  kjt[0].offsets = {0, 1, 3};
  kjt[1].values = {2, 3, 3};
  kjt[1].offsets = {0, 2, 3};
  REQUIRE(Deduplicate(kjt, {{0, 1}}).groups[0].unique_count() == 2);
}

TEST_CASE("expanding an IKJT gives back the KJT exactly, for random batches and groupings", "[data]") {
  const auto seed = GENERATE(take(50, random(1u, 1000000u)));
  std::mt19937_64 rng(seed);
  const size_t samples = rng() % 200, tables = 1 + rng() % 6;
  auto kjt = RandomKjt(rng, samples, tables);
  auto groups = RandomGroups(rng, tables);
  Ikjt ikjt = Deduplicate(kjt, groups);
  CAPTURE(seed, samples, tables);
  REQUIRE(Expand(ikjt, tables) == kjt);
  for (const auto& g : ikjt.groups) {
    // Tuples are distinct and every one is used.
    std::set<std::vector<std::vector<RowId>>> tuples;
    for (size_t u = 0; u < g.unique_count(); ++u) {
      std::vector<std::vector<RowId>> tuple;
      for (const auto& bags : g.unique) {
        tuple.emplace_back(bags.values.begin() + bags.offsets[u], bags.values.begin() + bags.offsets[u + 1]);
      }
      tuples.insert(tuple);
    }
    REQUIRE(tuples.size() == g.unique_count());
    std::set<uint32_t> used(g.inverse.begin(), g.inverse.end());
    REQUIRE(used.size() == g.unique_count());
  }
  REQUIRE(DedupFactor(kjt, ikjt) >= 1.0);
}

TEST_CASE("session batches (a tuple repeating in consecutive samples) dedup as a naive first-use numbering",
          "[data][dedup]") {
  const auto seed = GENERATE(take(30, random(1u, 1000000u)));
  std::mt19937_64 rng(seed);
  const size_t samples = 1 + rng() % 300, tables = 1 + rng() % 4;
  // Sessions: each sample repeats the previous one's bags in every table
  // with probability 3/4, else draws afresh (so tuples also recur apart).
  std::vector<SampleBlock::Table> kjt(tables);
  for (size_t i = 0; i < samples; ++i) {
    const bool repeat = i > 0 && rng() % 4 != 0;
    for (auto& t : kjt) {
      if (repeat) {
        const uint32_t b = t.offsets[i - 1], e = t.offsets[i];
        for (uint32_t p = b; p < e; ++p) t.values.push_back(t.values[p]);
      } else {
        const int len = static_cast<int>(rng() % 3);
        for (int k = 0; k < len; ++k) t.values.push_back(static_cast<RowId>(rng() % 3));
      }
      t.offsets.push_back(static_cast<uint32_t>(t.values.size()));
    }
  }
  std::vector<uint32_t> all(tables);
  for (size_t t = 0; t < tables; ++t) all[t] = static_cast<uint32_t>(t);
  const Ikjt ikjt = Deduplicate(kjt, {all});
  std::map<std::vector<std::vector<RowId>>, uint32_t> number;
  std::vector<uint32_t> want;
  for (size_t i = 0; i < samples; ++i) {
    std::vector<std::vector<RowId>> tuple;
    for (const auto& t : kjt) tuple.emplace_back(t.values.begin() + t.offsets[i], t.values.begin() + t.offsets[i + 1]);
    want.push_back(number.try_emplace(tuple, static_cast<uint32_t>(number.size())).first->second);
  }
  CAPTURE(seed, samples, tables);
  CHECK(ikjt.groups[0].inverse == want);
  CHECK(Expand(ikjt, tables) == kjt);
}
