// How a row's gradient is summed over trainers, in one place for every mode
// (ARCHITECTURE §5): contributions are added in rank order, starting from
// −0.0f, and a trainer that did not touch the row contributes nothing.
// −0.0f is IEEE addition's exact identity (−0 + x == x bitwise for every x,
// +0 and −0 included), so "start at −0 and skip absent trainers" equals "add
// −0 for absent trainers": an all-reduce that pads absent rows with −0, and a
// shard that adds only the contributions it received, get the same bits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace actorrec::trainer {

inline constexpr float kNoGradient = -0.0f;

// Starts a sum of `width` floats.
inline void StartRowSum(float* acc, uint32_t width) { std::fill(acc, acc + width, kNoGradient); }

// Adds the next trainer's contribution (call in ascending rank order).
inline void AddToRowSum(float* acc, const float* contribution, uint32_t width) {
  for (uint32_t j = 0; j < width; ++j) acc[j] += contribution[j];
}

}  // namespace actorrec::trainer
