// The pooling kernels: one thread per output element, the element's work
// in gpu/cuda/bag_ops.hpp (tested on the host against the CPU backend).
#include "gpu/cuda/bag_kernels.cuh"

#include "gpu/cuda/bag_ops.hpp"

namespace actorrec::gpu::cuda {
namespace {

// 256 threads a block, and at most 65535 blocks, each thread striding over
// the elements beyond: the work per element (a bag of a few rows) is too
// small to tune further before the rows live on the device (docs/gpu.md).
constexpr unsigned kThreads = 256;
constexpr size_t kMaxBlocks = 65535;

// Element e is (row e / width, column e % width): consecutive threads read
// consecutive floats of a row, whatever the width.
__global__ void PoolBySlotKernel(const float* rows, size_t row_stride, size_t width, const uint32_t* unique_slots,
                                 const uint32_t* inverse, const uint32_t* offsets, size_t samples, bool mean,
                                 float* out, size_t out_stride) {
  const size_t total = samples * width;
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    const size_t i = e / width, j = e % width;
    out[i * out_stride + j] = PoolElement(rows, row_stride, unique_slots, inverse, offsets[i], offsets[i + 1], j, mean);
  }
}

__global__ void BagGradToUniqueKernel(const float* pooled_grad, size_t in_stride, size_t width, const uint32_t* offsets,
                                      const uint32_t* row_start, const uint32_t* sample_of, size_t unique_count,
                                      bool mean, float* grad_unique) {
  const size_t total = unique_count * width;
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    const size_t u = e / width, j = e % width;
    grad_unique[e] = BagGradElement(pooled_grad, in_stride, offsets, sample_of, row_start[u], row_start[u + 1], j, mean);
  }
}

__global__ void SumRowsByIndexKernel(const float* in, size_t in_stride, size_t width, const uint32_t* row_start,
                                     const uint32_t* sample_of, size_t groups, float* out, size_t out_stride) {
  const size_t total = groups * width;
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    const size_t u = e / width, j = e % width;
    out[u * out_stride + j] = BagGradElement(in, in_stride, nullptr, sample_of, row_start[u], row_start[u + 1], j, false);
  }
}

unsigned BlocksFor(size_t elements) {
  const size_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace

cudaError_t LaunchPoolBySlot(const float* rows, size_t row_stride, size_t width, const uint32_t* unique_slots,
                             const uint32_t* inverse, const uint32_t* offsets, size_t samples, bool mean, float* out,
                             size_t out_stride, cudaStream_t stream) {
  if (samples == 0 || width == 0) return cudaSuccess;
  PoolBySlotKernel<<<BlocksFor(samples * width), kThreads, 0, stream>>>(rows, row_stride, width, unique_slots,
                                                                           inverse, offsets, samples, mean, out,
                                                                           out_stride);
  return cudaGetLastError();
}

cudaError_t LaunchBagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const uint32_t* offsets,
                                  const uint32_t* row_start, const uint32_t* sample_of, size_t unique_count, bool mean,
                                  float* grad_unique, cudaStream_t stream) {
  if (unique_count == 0 || width == 0) return cudaSuccess;
  BagGradToUniqueKernel<<<BlocksFor(unique_count * width), kThreads, 0, stream>>>(
      pooled_grad, in_stride, width, offsets, row_start, sample_of, unique_count, mean, grad_unique);
  return cudaGetLastError();
}

cudaError_t LaunchSumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* row_start,
                                 const uint32_t* sample_of, size_t groups, float* out, size_t out_stride,
                                 cudaStream_t stream) {
  if (groups == 0 || width == 0) return cudaSuccess;
  SumRowsByIndexKernel<<<BlocksFor(groups * width), kThreads, 0, stream>>>(in, in_stride, width, row_start, sample_of,
                                                                            groups, out, out_stride);
  return cudaGetLastError();
}

}  // namespace actorrec::gpu::cuda
