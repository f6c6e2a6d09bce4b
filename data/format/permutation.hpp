// Portable pseudo-random bijections over [0, n): the same (n, key) gives the
// same permutation on every machine, compiler and standard library, which
// std::shuffle and std::uniform_int_distribution do not promise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace actorrec::data::format {

// splitmix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit
// mixer; consecutive inputs give statistically independent outputs.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A key for stream `b` of key `a` (e.g. the epoch of a seed).
constexpr uint64_t DeriveKey(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b)); }

// A keyed permutation of [0, n) evaluated pointwise in O(1) memory: a
// Feistel network over the smallest bit domain holding n (k bits, k >= 2,
// fewer than 2n values), split into halves of floor(k/2) and ceil(k/2) bits
// that swap widths each round, with cycle walking back into [0, n) (Black
// and Rogaway 2002): fewer than 2 tries per index on average. Four rounds:
// Luby and Rackoff show three make a pseudo-random permutation from random
// round functions; the fourth is cheap insurance, and an even count brings
// the half widths back.
class FeistelPermutation {
 public:
  FeistelPermutation(uint64_t n, uint64_t key);

  // The image of i, for i < n.
  uint64_t operator()(uint64_t i) const {
    do i = Encrypt(i);
    while (i >= n_);
    return i;
  }
  uint64_t size() const { return n_; }

  // Replaces each value v (< n) with its image. Evaluating many at once is
  // bound by throughput instead of one chain's latency.
  void Map(uint64_t* values, size_t count) const;

 private:
  static constexpr int kRounds = 4;
  uint64_t Encrypt(uint64_t x) const {
    uint64_t left = x >> right_bits_;
    uint64_t right = x & right_mask_;
    uint64_t left_mask = left_mask_;
    uint64_t right_mask = right_mask_;
    for (uint64_t key : keys_) {
      const uint64_t next = left ^ (SplitMix64(right ^ key) & left_mask);
      left = right;
      right = next;
      std::swap(left_mask, right_mask);
    }
    return (left << right_bits_) | right;
  }

  uint64_t n_;
  uint32_t right_bits_ = 1;
  uint64_t left_mask_ = 1;
  uint64_t right_mask_ = 1;
  uint64_t keys_[kRounds] = {};
};

}  // namespace actorrec::data::format
