// Bags for the pooling tests of every backend: random ones (empty, one-row
// and long bags, rows repeated in a bag, unique rows no position uses) and
// skewed ones (most positions on a few hot rows), and bitwise comparison.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

struct Bags {
  std::vector<uint32_t> unique_slots, inverse, offsets{0};
  SlotBags view() const {
    return {unique_slots.data(), unique_slots.size(), inverse.data(), offsets.data(), offsets.size() - 1};
  }
};

inline bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Random bags over `unique` rows of `slots` slots: empty bags, long bags and
// rows repeated in one bag all occur; some unique rows may be used by no
// position. skewed: most positions fall on the first few unique rows (a hot
// row then sums hundreds of positions), one bag in four holds one row.
inline Bags RandomBags(data::gen::Rng& rng, size_t slots, size_t unique, size_t samples, bool skewed = false) {
  Bags bags;
  for (size_t u = 0; u < unique; ++u) bags.unique_slots.push_back(static_cast<uint32_t>(rng.Below(slots)));
  for (size_t i = 0; i < samples; ++i) {
    size_t len = rng.Below(8) == 0 ? 10 + rng.Below(20) : rng.Below(4);
    if (skewed && rng.Below(4) == 0) len = 1;
    for (size_t p = 0; p < len; ++p) {
      const size_t u = skewed && rng.Below(4) != 0 ? rng.Below(unique < 3 ? unique : 3) : rng.Below(unique);
      bags.inverse.push_back(static_cast<uint32_t>(u));
    }
    bags.offsets.push_back(static_cast<uint32_t>(bags.inverse.size()));
  }
  return bags;
}

// Values over 21 binades, so that sums round and their order shows.
inline float RandomValue(data::gen::Rng& rng) {
  return static_cast<float>(std::ldexp(rng.Normal(), static_cast<int>(rng.Below(21)) - 10));
}

}  // namespace actorrec::gpu
