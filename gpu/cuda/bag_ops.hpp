// The per-element work of the CUDA backend's PoolBySlot, BagGradToUnique
// and SumRowsByIndex (gpu/cuda/bag_kernels.cu): one output element each, in
// the order gpu/backend.hpp states, with the CPU backend's roundings. g++ compiles
// these too, and tests/gpu/bag_ops_test.cpp checks them bitwise against
// the CPU backend, so the host suite covers the arithmetic the kernels run.
//
// No atomics anywhere: BagGradToUnique first groups each unique row's
// positions in ascending order (BagCsr, a stable counting sort over
// `inverse` on the host), and one thread per (unique row, column) then sums
// them in that order.
//
// Division: 1.0f / len is IEEE-rounded on both sides (g++; nvcc with
// -prec-div=true, set in gpu/cuda/meson.build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/cuda/hd.hpp"

namespace actorrec::gpu::cuda {

// out[i·out_stride + j] for one sample i: its bag's rows summed in ascending
// position, starting from the first row itself (a one-row bag gives that
// row's exact bits, −0.0f included); mean: the sum times 1.0f / len; an
// empty bag: +0.0f.
ACTORREC_HD float PoolElement(const float* rows, size_t row_stride, const uint32_t* unique_slots,
                              const uint32_t* inverse, uint32_t begin, uint32_t end, size_t j, bool mean) {
  if (begin == end) return 0.0f;
  float sum = rows[size_t{unique_slots[inverse[begin]]} * row_stride + j];
  for (uint32_t p = begin + 1; p < end; ++p) {
    sum = Add(sum, rows[size_t{unique_slots[inverse[p]]} * row_stride + j]);
  }
  if (mean) sum = Mul(sum, 1.0f / static_cast<float>(end - begin));
  return sum;
}

// Each unique row's positions, as the samples whose bags hold them, in
// ascending position: unique row u's are sample_of[row_start[u] …
// row_start[u + 1]).
struct BagCsr {
  std::vector<uint32_t> row_start;  // unique_count + 1 entries
  std::vector<uint32_t> sample_of;  // offsets[samples] entries
};

// A stable counting sort of the positions by inverse[p]. `inverse` and
// `offsets` as in gpu::SlotBags; every inverse[p] < unique_count (the
// caller's contract, as for the CPU backend). offsets null: one position per
// sample (p = i), SumRowsByIndex's case (inverse = its index, unique_count =
// its groups): each group's samples in ascending order.
inline void BuildBagCsr(const uint32_t* inverse, const uint32_t* offsets, size_t samples, size_t unique_count,
                        BagCsr* csr) {
  const uint32_t positions = offsets != nullptr ? offsets[samples] : static_cast<uint32_t>(samples);
  csr->row_start.assign(unique_count + 1, 0);
  for (uint32_t p = 0; p < positions; ++p) ++csr->row_start[size_t{inverse[p]} + 1];
  for (size_t u = 0; u < unique_count; ++u) csr->row_start[u + 1] += csr->row_start[u];
  csr->sample_of.resize(positions);
  std::vector<uint32_t> next(csr->row_start.begin(), csr->row_start.end() - 1);
  for (size_t i = 0; i < samples; ++i) {
    const uint32_t begin = offsets != nullptr ? offsets[i] : static_cast<uint32_t>(i);
    const uint32_t end = offsets != nullptr ? offsets[i + 1] : static_cast<uint32_t>(i + 1);
    for (uint32_t p = begin; p < end; ++p) csr->sample_of[next[inverse[p]]++] = static_cast<uint32_t>(i);
  }
}

// grad_unique[u·width + j] for one unique row u: −0.0f (the additive
// identity), plus each of its positions' pooled gradient in ascending
// position; mean: each one first rounded times 1.0f / len of its bag (not
// mean: `offsets` is not read, and may be null). With the CSR of
// BuildBagCsr(index, nullptr, …) it is SumRowsByIndex's element: group u's
// rows of `pooled_grad` in ascending sample order.
ACTORREC_HD float BagGradElement(const float* pooled_grad, size_t in_stride, const uint32_t* offsets,
                                 const uint32_t* sample_of, uint32_t first, uint32_t last, size_t j, bool mean) {
  float sum = -0.0f;
  for (uint32_t k = first; k < last; ++k) {
    const uint32_t i = sample_of[k];
    const float g = pooled_grad[size_t{i} * in_stride + j];
    sum = mean ? Add(sum, Mul(g, 1.0f / static_cast<float>(offsets[i + 1] - offsets[i]))) : Add(sum, g);
  }
  return sum;
}

}  // namespace actorrec::gpu::cuda
