// In-batch dedup (KJT -> IKJT) and its inverse, the jagged index-select.
#include "data/batches/batch.hpp"

#include <xxhash.h>

#include <algorithm>
#include <unordered_map>

#include "base/status.hpp"

namespace actorrec::data {

std::vector<std::vector<uint32_t>> SingletonGroups(size_t num_tables) {
  std::vector<std::vector<uint32_t>> groups(num_tables);
  for (size_t t = 0; t < num_tables; ++t) groups[t] = {static_cast<uint32_t>(t)};
  return groups;
}

namespace {

// Hash of sample i's bag tuple over the group's tables: one seeded XXH3 per
// bag, each seeded with the running hash and the bag's length, so that
// {1}{2,3} and {1,2}{3} hash apart.
uint64_t TupleHash(const std::vector<SampleBlock::Table>& tables, const std::vector<uint32_t>& group, size_t i) {
  uint64_t h = 0;
  for (uint32_t t : group) {
    const auto& tab = tables[t];
    const uint32_t len = tab.offsets[i + 1] - tab.offsets[i];
    h = XXH3_64bits_withSeed(tab.values.data() + tab.offsets[i], len * sizeof(RowId), h * 0x9E3779B97F4A7C15ULL + len);
  }
  return h;
}

bool SameTuple(const std::vector<SampleBlock::Table>& tables, const std::vector<uint32_t>& group, size_t i,
               size_t j) {
  for (uint32_t t : group) {
    const auto& tab = tables[t];
    const uint32_t li = tab.offsets[i + 1] - tab.offsets[i], lj = tab.offsets[j + 1] - tab.offsets[j];
    if (li != lj || !std::equal(tab.values.begin() + tab.offsets[i], tab.values.begin() + tab.offsets[i + 1],
                                tab.values.begin() + tab.offsets[j])) {
      return false;
    }
  }
  return true;
}

}  // namespace

Ikjt Deduplicate(const std::vector<SampleBlock::Table>& tables, const std::vector<std::vector<uint32_t>>& groups) {
  Ikjt out;
  if (tables.empty()) return out;
  const size_t samples = tables[0].offsets.size() - 1;
  std::vector<int> seen(tables.size(), 0);
  // Hash -> first sample with that tuple. Collisions between different
  // tuples are resolved by comparing bags, chaining through `next`.
  std::unordered_map<uint64_t, uint32_t> first;
  std::vector<uint32_t> next;
  std::vector<uint32_t> representative;  // tuple u -> first sample that used it
  for (const auto& group : groups) {
    for (uint32_t t : group) {
      ACTORREC_ASSERT(t < tables.size() && seen[t]++ == 0, "each table in exactly one group");
      ACTORREC_ASSERT(tables[t].offsets.size() == samples + 1, "tables of one batch have the same samples");
    }
    IkjtGroup g;
    g.tables = group;
    std::sort(g.tables.begin(), g.tables.end());
    g.inverse.resize(samples);
    first.clear();
    first.reserve(samples);
    next.assign(samples, UINT32_MAX);
    representative.clear();
    std::vector<uint32_t> tuple_of(samples);  // sample -> its tuple, for samples that are representatives
    for (size_t i = 0; i < samples; ++i) {
      // A session's samples follow each other: a tuple equal to the previous
      // sample's is that tuple, found without hashing (the numbering is the
      // same: it is not a new tuple). recd_bench, S = 16: most samples.
      if (i > 0 && SameTuple(tables, g.tables, i, i - 1)) {
        g.inverse[i] = g.inverse[i - 1];
        continue;
      }
      const uint64_t h = TupleHash(tables, g.tables, i);
      auto [it, inserted] = first.try_emplace(h, static_cast<uint32_t>(i));
      uint32_t u = UINT32_MAX;
      if (!inserted) {
        for (uint32_t j = it->second;; j = next[j]) {
          if (SameTuple(tables, g.tables, i, j)) {
            u = tuple_of[j];
            break;
          }
          if (next[j] == UINT32_MAX) {
            next[j] = static_cast<uint32_t>(i);  // a new tuple that collides: chain it
            break;
          }
        }
      }
      if (u == UINT32_MAX) {
        u = static_cast<uint32_t>(representative.size());
        representative.push_back(static_cast<uint32_t>(i));
        tuple_of[i] = u;
      }
      g.inverse[i] = u;
    }
    g.unique.resize(g.tables.size());
    for (size_t k = 0; k < g.tables.size(); ++k) JaggedIndexSelect(tables[g.tables[k]], representative, &g.unique[k]);
    out.groups.push_back(std::move(g));
  }
  return out;
}

void JaggedIndexSelect(const SampleBlock::Table& bags, const std::vector<uint32_t>& indices, SampleBlock::Table* out) {
  out->offsets.resize(indices.size() + 1);
  out->offsets[0] = 0;
  uint32_t total = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const uint32_t b = indices[i];
    total += bags.offsets[b + 1] - bags.offsets[b];
    out->offsets[i + 1] = total;
  }
  out->values.resize(total);
  RowId* dst = out->values.data();
  for (uint32_t b : indices) {
    const RowId* begin = bags.values.data() + bags.offsets[b];
    const RowId* end = bags.values.data() + bags.offsets[b + 1];
    dst = std::copy(begin, end, dst);
  }
}

std::vector<SampleBlock::Table> Expand(const Ikjt& ikjt, size_t num_tables) {
  std::vector<SampleBlock::Table> out(num_tables);
  std::vector<int> seen(num_tables, 0);
  for (const auto& g : ikjt.groups) {
    for (size_t k = 0; k < g.tables.size(); ++k) {
      ACTORREC_ASSERT(g.tables[k] < num_tables && seen[g.tables[k]]++ == 0, "each table in exactly one group");
      JaggedIndexSelect(g.unique[k], g.inverse, &out[g.tables[k]]);
    }
  }
  for (size_t t = 0; t < num_tables; ++t) ACTORREC_ASSERT(seen[t] == 1, "every table in a group");
  return out;
}

std::vector<std::vector<uint32_t>> CompleteGroups(const std::vector<std::vector<uint32_t>>& groups, size_t num_tables) {
  std::vector<std::vector<uint32_t>> out = groups;
  std::vector<bool> grouped(num_tables, false);
  for (const auto& g : groups) {
    for (uint32_t t : g) {
      if (t < num_tables) grouped[t] = true;
    }
  }
  for (size_t t = 0; t < num_tables; ++t) {
    if (!grouped[t]) out.push_back({static_cast<uint32_t>(t)});
  }
  return out;
}

double DedupFactor(const std::vector<SampleBlock::Table>& kjt, const Ikjt& ikjt) {
  size_t before = 0, after = 0;
  for (const auto& t : kjt) before += t.values.size();
  for (const auto& g : ikjt.groups) {
    for (const auto& u : g.unique) after += u.values.size();
  }
  return after == 0 ? 1.0 : static_cast<double>(before) / static_cast<double>(after);
}

}  // namespace actorrec::data
