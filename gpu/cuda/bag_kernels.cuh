// Launchers of the pooling kernels (bag_kernels.cu): PoolBySlot,
// BagGradToUnique and SumRowsByIndex on device pointers, each element as gpu/cuda/bag_ops.hpp
// computes it. Asynchronous on `stream` (the last argument); a launch error
// is returned, not raised (cudaGetLastError right after the launch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace actorrec::gpu::cuda {

// out[i·out_stride + j] = PoolElement(…) for i < samples, j < width.
// offsets: samples + 1 entries on the device.
cudaError_t LaunchPoolBySlot(const float* rows, size_t row_stride, size_t width, const uint32_t* unique_slots,
                             const uint32_t* inverse, const uint32_t* offsets, size_t samples, bool mean, float* out,
                             size_t out_stride, cudaStream_t stream);

// grad_unique[u·width + j] = BagGradElement(…) for u < unique_count,
// j < width; row_start and sample_of: a BagCsr on the device.
cudaError_t LaunchBagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const uint32_t* offsets,
                                  const uint32_t* row_start, const uint32_t* sample_of, size_t unique_count, bool mean,
                                  float* grad_unique, cudaStream_t stream);

// out[u·out_stride + j] = BagGradElement(in, in_stride, null, sample_of,
// row_start[u], row_start[u + 1], j, false) for u < groups, j < width: each
// group's rows of `in` summed from −0.0f in ascending sample order (one
// thread per element, no atomics); row_start and sample_of: the BagCsr of
// BuildBagCsr(index, nullptr, n, groups) on the device.
cudaError_t LaunchSumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* row_start,
                                 const uint32_t* sample_of, size_t groups, float* out, size_t out_stride,
                                 cudaStream_t stream);

}  // namespace actorrec::gpu::cuda
