// The optimizer state an embedding row carries after its weights: one rule
// for models::RowOptimizer, which lays rows out, and for the config's memory
// checks, which size them before anything is built.
#pragma once

#include <cstdint>

#include "configs/config.hpp"

namespace actorrec::config {

// sgd none, adagrad one float per weight, rowwise_adagrad one float, adam
// two floats per weight and a step count.
inline uint32_t RowStateFloats(SparseOptimizer kind, uint32_t width) {
  switch (kind) {
    case SparseOptimizer::kSgd: return 0;
    case SparseOptimizer::kAdagrad: return width;
    case SparseOptimizer::kRowwiseAdagrad: return 1;
    case SparseOptimizer::kAdam: return 2 * width + 1;
  }
  return 0;
}

}  // namespace actorrec::config
