// A bounded shuffle of a sample stream: the stream is cut into windows of
// `window` samples, and each window comes out in a seeded random order
// (Fisher-Yates over its positions, from `seed` and the window's number).
// Memory is one window. The order depends only on the stream, the window and
// the seed, never on how the reader cuts blocks, so an epoch read again (a
// resume skipping its first batches) comes out the same. Text and binary
// training files use it for dataset.shuffle; actorrec files shuffle their
// chunks instead (data/format/epoch_reader.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "data/sample_reader.hpp"

namespace actorrec::data {

// 131,072 samples: the window actorrec files mix over (64 chunks of 2048).
inline constexpr size_t kDefaultShuffleWindow = size_t{1} << 17;

std::unique_ptr<SampleReader> ShuffleWindow(std::unique_ptr<SampleReader> inner, size_t window, uint64_t seed);

}  // namespace actorrec::data
