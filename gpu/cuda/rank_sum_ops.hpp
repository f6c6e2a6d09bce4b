// The per-element work of the NCCL collective's rank-order sum
// (rank_sum_kernels.cu), compiled by nvcc for the kernel and by g++ for the
// host tests, which hold it bitwise to the CPU collectives' sum.
//
// `gathered` is an all-gather's output: rank r's n floats at r·n. Element i
// is ((x0[i] + x1[i]) + x2[i]) + … + x_{W−1}[i], in exactly that order,
// starting from x0[i] itself (as the shared-memory collective copies rank
// 0's value first; −0.0f + x0 would give the same bits, row_sync.hpp), each
// addition rounded on its own (cuda::Add: no contraction).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/hd.hpp"

namespace actorrec::gpu::cuda {

ACTORREC_HD float RankOrderSumElement(const float* gathered, size_t n, uint32_t ranks, size_t i) {
  float acc = gathered[i];
  for (uint32_t r = 1; r < ranks; ++r) acc = Add(acc, gathered[size_t{r} * n + i]);
  return acc;
}

}  // namespace actorrec::gpu::cuda
