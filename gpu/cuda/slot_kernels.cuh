// Launchers of the cache slots' copy kernels (slot_kernels.cu): the
// scatter of staged rows into their slots and the gather of slots into
// staging, and the row gather of GatherRows, each element as
// gpu/cuda/slot_ops.hpp computes it. Every pointer
// is device memory. Asynchronous on `stream` (the last argument); a launch
// error is returned (cudaGetLastError right after the launch); n == 0
// launches nothing. Built, not yet run on a GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace actorrec::gpu::cuda {

// rows[slots[i]·row_stride + j] = staged[i·row_floats + j], i < n, j < row_floats.
cudaError_t LaunchScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                               size_t row_stride, cudaStream_t stream);
// staged[i·row_floats + j] = rows[slots[i]·row_stride + j].
cudaError_t LaunchGatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n,
                              size_t row_floats, float* staged, cudaStream_t stream);

// out[i·out_stride + j] = src[index[i]·src_stride + j], i < n, j < width
// (Backend::GatherRows; GatherRowElement).
cudaError_t LaunchGatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                             float* out, size_t out_stride, cudaStream_t stream);

}  // namespace actorrec::gpu::cuda
