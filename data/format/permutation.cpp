// Sizing the Feistel domain, its round keys, and mapping many values at once.
#include "data/format/permutation.hpp"

#include <vector>

namespace actorrec::data::format {

FeistelPermutation::FeistelPermutation(uint64_t n, uint64_t key) : n_(n) {
  // The smallest k >= 2 with 2^k >= n; k = 64 covers every uint64_t n.
  uint32_t bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  const uint32_t left_bits = bits / 2;
  right_bits_ = bits - left_bits;
  left_mask_ = (uint64_t{1} << left_bits) - 1;
  right_mask_ = (uint64_t{1} << right_bits_) - 1;
  for (int r = 0; r < kRounds; ++r) keys_[r] = DeriveKey(key, static_cast<uint64_t>(r));
}

void FeistelPermutation::Map(uint64_t* values, size_t count) const {
  // One branch-free pass for all, then the cycle walk for those that left
  // [0, n) (at most 3 in 4 per pass, since the domain holds < 4n values).
  for (size_t i = 0; i < count; ++i) values[i] = Encrypt(values[i]);
  std::vector<size_t> pending;
  for (size_t i = 0; i < count; ++i) {
    if (values[i] >= n_) pending.push_back(i);
  }
  while (!pending.empty()) {
    size_t left = 0;
    for (size_t i : pending) {
      values[i] = Encrypt(values[i]);
      if (values[i] >= n_) pending[left++] = i;
    }
    pending.resize(left);
  }
}

}  // namespace actorrec::data::format
