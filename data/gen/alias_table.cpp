// Vose's construction of the alias table.
#include "data/gen/alias_table.hpp"

#include <algorithm>
#include <cmath>

#include "base/status.hpp"

namespace actorrec::data::gen {

AliasTable::AliasTable(std::span<const double> weights) : size_(weights.size()), columns_(weights.size()) {
  ACTORREC_ASSERT(!weights.empty() && weights.size() < (uint64_t{1} << 32), "alias table size out of range");
  double sum = 0.0;
  for (double w : weights) sum += w;
  ACTORREC_ASSERT(sum > 0.0, "alias table weights sum to zero");
  const size_t n = weights.size();
  // Scaled so that the average column holds exactly 1.
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  // A full column: its own index always (the alias is never taken, and would
  // be itself anyway when the low word is all ones).
  auto full = [](uint32_t i) { return Column{0xffffffffu, i}; };
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back();
    small.pop_back();
    const uint32_t l = large.back();
    const double threshold = std::min(4294967295.0, std::round(scaled[s] * 4294967296.0));
    columns_[s] = {static_cast<uint32_t>(threshold), l};
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left holds 1 up to rounding.
  for (uint32_t i : large) columns_[i] = full(i);
  for (uint32_t i : small) columns_[i] = full(i);
}

}  // namespace actorrec::data::gen
