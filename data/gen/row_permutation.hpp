// RowPermutation: a fixed pseudo-random bijection of [0, rows), mapping a
// popularity rank to a row id so that hot rows are scattered over the table
// as they are after hashing, rather than packed at its start (which would
// flatter any cache keyed by contiguous ranges).
//
// It stores nothing per row: a keyed mixer is a bijection on [0, 2^bits)
// with 2^bits < 2 * rows, and values that land outside [0, rows) are mapped
// again ("cycle walking", Black & Rogaway 2002), which stays inside the cycle
// of the start value and so keeps the bijection; fewer than 2 steps on average.
#pragma once

#include <cstdint>

#include "data/gen/random.hpp"

namespace actorrec::data::gen {

class RowPermutation {
 public:
  // REQUIRES: 1 <= rows <= 2^32.
  RowPermutation(uint64_t rows, uint64_t key) : rows_(rows) {
    uint32_t bits = 1;
    while ((uint64_t{1} << bits) < rows) ++bits;
    mask_ = (uint64_t{1} << bits) - 1;
    shift_ = bits / 2 > 0 ? bits / 2 : 1;
    for (int i = 0; i < kRounds; ++i) {
      mul_[i] = Mix64(key + 2 * i) | 1;  // odd: a bijection modulo 2^bits
      add_[i] = Mix64(key + 2 * i + 1);
    }
  }

  uint64_t rows() const { return rows_; }

  // REQUIRES: rank < rows().
  uint64_t operator()(uint64_t rank) const {
    uint64_t x = rank;
    do {
      x = Step(x);
    } while (x >= rows_);
    return x;
  }

 private:
  // Three rounds of multiply-add (mixes upward) and xor-shift (mixes
  // downward), each a bijection on bits-bit values.
  static constexpr int kRounds = 3;

  uint64_t Step(uint64_t x) const {
    for (int i = 0; i < kRounds; ++i) {
      x = (x * mul_[i] + add_[i]) & mask_;
      x ^= x >> shift_;
    }
    return x;
  }

  uint64_t rows_;
  uint64_t mask_;
  uint32_t shift_;
  uint64_t mul_[kRounds];
  uint64_t add_[kRounds];
};

}  // namespace actorrec::data::gen
