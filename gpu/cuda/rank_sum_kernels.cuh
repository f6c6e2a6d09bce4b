// Launcher of the NCCL collective's rank-order sum (rank_sum_kernels.cu):
// out[i] = RankOrderSumElement(gathered, n, ranks, i) for i < n, on device
// pointers. Asynchronous on `stream` (the last argument); a launch error is
// returned, not raised. `out` must not overlap `gathered` (the kernel reads
// every rank's slice while it writes).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace actorrec::gpu::cuda {

cudaError_t LaunchRankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out, cudaStream_t stream);

}  // namespace actorrec::gpu::cuda
