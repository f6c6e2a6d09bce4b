// The cache slots' copy kernels: one thread per float, the element's work
// in gpu/cuda/slot_ops.hpp (tested on the host against the Backend's
// defaults).
#include "gpu/cuda/slot_kernels.cuh"

#include "gpu/cuda/slot_ops.hpp"

namespace actorrec::gpu::cuda {
namespace {

// 256 threads a block, at most 65535 blocks, each thread striding beyond
// (as bag_kernels.cu): a copy has no arithmetic to tune.
constexpr unsigned kThreads = 256;
constexpr size_t kMaxBlocks = 65535;

unsigned BlocksFor(size_t elements) {
  const size_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__global__ void ScatterSlotsKernel(const float* staged, const uint32_t* slots, size_t total, size_t row_floats,
                                   float* rows, size_t row_stride) {
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    ScatterSlotElement(staged, slots, row_floats, rows, row_stride, e);
  }
}

__global__ void GatherSlotsKernel(const float* rows, size_t row_stride, const uint32_t* slots, size_t total,
                                  size_t row_floats, float* staged) {
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    GatherSlotElement(rows, row_stride, slots, row_floats, staged, e);
  }
}

__global__ void GatherRowsKernel(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t total,
                                 float* out, size_t out_stride) {
  for (size_t e = size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += size_t{gridDim.x} * blockDim.x) {
    GatherRowElement(src, src_stride, index, width, out, out_stride, e);
  }
}

}  // namespace

cudaError_t LaunchScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                               size_t row_stride, cudaStream_t stream) {
  if (n == 0 || row_floats == 0) return cudaSuccess;
  ScatterSlotsKernel<<<BlocksFor(n * row_floats), kThreads, 0, stream>>>(staged, slots, n * row_floats, row_floats,
                                                                           rows, row_stride);
  return cudaGetLastError();
}

cudaError_t LaunchGatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n,
                              size_t row_floats, float* staged, cudaStream_t stream) {
  if (n == 0 || row_floats == 0) return cudaSuccess;
  GatherSlotsKernel<<<BlocksFor(n * row_floats), kThreads, 0, stream>>>(rows, row_stride, slots, n * row_floats,
                                                                          row_floats, staged);
  return cudaGetLastError();
}

cudaError_t LaunchGatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                             float* out, size_t out_stride, cudaStream_t stream) {
  if (n == 0 || width == 0) return cudaSuccess;
  GatherRowsKernel<<<BlocksFor(n * width), kThreads, 0, stream>>>(src, src_stride, width, index, n * width, out,
                                                                    out_stride);
  return cudaGetLastError();
}

}  // namespace actorrec::gpu::cuda
