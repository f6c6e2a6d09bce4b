// Launchers of the optimizer kernels: models/optimizers.cpp's dense SGD,
// Adagrad and Adam, and the row optimizers SGD, Adagrad, row-wise Adagrad
// and lazy Adam on rows that carry their state ([width weights][state], as
// RowOptimizer documents). Each kernel runs a function of
// gpu/cuda/optimizer_ops.hpp per thread (the host tests check those against
// the CPU code bit for bit); every update equals the CPU's bits on the
// device too, except lazy Adam's bias correction past the host's table
// (docs/gpu.md).
//
// Every pointer is device memory. Each launcher enqueues on `stream` (the
// last argument) and returns cudaGetLastError() of the launch; a zero-size
// call launches nothing. Built, not yet run on a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/optimizer_ops.hpp"

namespace actorrec::gpu::cuda {

// ---- dense: n parameters p with gradients g, one thread per element
cudaError_t LaunchDenseSgd(float* p, const float* g, size_t n, float lr, cudaStream_t stream);
// acc: the n accumulators (DenseOptimizer's state).
cudaError_t LaunchDenseAdagrad(float* p, float* acc, const float* g, size_t n, float lr, float eps,
                               cudaStream_t stream);
// m, v: the n moments. The caller advances the step count (a float, + 1)
// and passes c1 = AdamCorrection(beta1, step), c2 = AdamCorrection(beta2,
// step), computed on the host: the CPU's bits.
cudaError_t LaunchDenseAdam(float* p, float* m, float* v, const float* g, size_t n, AdamSettings s, float c1,
                            float c2, cudaStream_t stream);

// ---- rows: count rows, row u at rows + slots[u]·row_stride (slots null:
// u·row_stride), its summed gradient at grads + u·width. Slots must be
// distinct (one update per row, as RowOptimizer::Apply per unique row).
struct RowBatch {
  float* rows;
  size_t row_stride;     // ≥ width + the kind's state floats
  const uint32_t* slots; // count entries, or null
  const float* grads;    // count × width
  size_t count;
  uint32_t width;
};
// One thread per element.
cudaError_t LaunchRowSgd(const RowBatch& b, float lr, cudaStream_t stream);
cudaError_t LaunchRowAdagrad(const RowBatch& b, float lr, float eps, cudaStream_t stream);
// One thread per row (the mean of g² is one loop in j order).
cudaError_t LaunchRowwiseAdagrad(const RowBatch& b, float lr, float eps, cudaStream_t stream);
// One thread per row. table: FillAdamCorrections for steps 1 … table_count
// (device memory; null for none): a row whose step is in it gets the CPU's
// bits, any other computes 1 − β^t with the device's powf (docs/gpu.md).
cudaError_t LaunchRowAdam(const RowBatch& b, AdamSettings s, const float* table, uint32_t table_count,
                          cudaStream_t stream);

}  // namespace actorrec::gpu::cuda
