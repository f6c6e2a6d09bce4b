// The rank-order sum of an all-gather: one thread per element, the element's
// work in gpu/cuda/rank_sum_ops.hpp (tested on the host against the CPU's
// rank-order sum). No atomics, no shared-memory tree: each element's W
// additions run in rank order in one thread.
#include "gpu/cuda/rank_sum_kernels.cuh"

#include "gpu/cuda/rank_sum_ops.hpp"

namespace actorrec::gpu::cuda {
namespace {

// As the pooling kernels (bag_kernels.cu): 256 threads a block, at most
// 65535 blocks, each thread striding beyond; consecutive threads read
// consecutive floats of every rank's slice.
constexpr unsigned kThreads = 256;
constexpr size_t kMaxBlocks = 65535;

__global__ void RankOrderSumKernel(const float* gathered, size_t n, uint32_t ranks, float* out) {
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    out[i] = RankOrderSumElement(gathered, n, ranks, i);
  }
}

}  // namespace

cudaError_t LaunchRankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out, cudaStream_t stream) {
  if (n == 0 || ranks == 0) return cudaSuccess;
  const size_t blocks = (n + kThreads - 1) / kThreads;
  RankOrderSumKernel<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0, stream>>>(
      gathered, n, ranks, out);
  return cudaGetLastError();
}

}  // namespace actorrec::gpu::cuda
