// The kernels of gpu/cuda/optimizer_kernels.cuh: one thread per element
// (SGD, Adagrad, dense Adam) or per row (row-wise Adagrad, lazy Adam, whose
// row state is one reduction or one step count), each running a function
// of gpu/cuda/optimizer_ops.hpp. Built, not yet run on a GPU.
#include "gpu/cuda/optimizer_kernels.cuh"

namespace actorrec::gpu::cuda {
namespace {

constexpr unsigned kBlock = 256;

unsigned Blocks(size_t count) { return static_cast<unsigned>((count + kBlock - 1) / kBlock); }

__device__ size_t ThreadIndex() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__device__ float* RowOf(const RowBatch& b, size_t u) {
  return b.rows + (b.slots != nullptr ? static_cast<size_t>(b.slots[u]) : u) * b.row_stride;
}

__global__ void DenseSgdKernel(float* p, const float* g, size_t n, float lr) {
  const size_t i = ThreadIndex();
  if (i < n) p[i] = SgdUpdate(p[i], g[i], lr);
}

__global__ void DenseAdagradKernel(float* p, float* acc, const float* g, size_t n, float lr, float eps) {
  const size_t i = ThreadIndex();
  if (i < n) AdagradUpdate(p + i, acc + i, g[i], lr, eps);
}

__global__ void DenseAdamKernel(float* p, float* m, float* v, const float* g, size_t n, AdamSettings s, float c1,
                                float c2) {
  const size_t i = ThreadIndex();
  if (i < n) AdamUpdate(p + i, m + i, v + i, g[i], s, c1, c2);
}

__global__ void RowSgdKernel(RowBatch b, float lr) {
  const size_t e = ThreadIndex();
  if (e >= b.count * b.width) return;
  const size_t u = e / b.width, j = e % b.width;
  float* row = RowOf(b, u);
  row[j] = SgdUpdate(row[j], b.grads[e], lr);
}

__global__ void RowAdagradKernel(RowBatch b, float lr, float eps) {
  const size_t e = ThreadIndex();
  if (e >= b.count * b.width) return;
  const size_t u = e / b.width, j = e % b.width;
  float* row = RowOf(b, u);
  AdagradUpdate(row + j, row + b.width + j, b.grads[e], lr, eps);
}

__global__ void RowwiseAdagradKernel(RowBatch b, float lr, float eps) {
  const size_t u = ThreadIndex();
  if (u < b.count) RowwiseAdagradRow(RowOf(b, u), b.grads + u * b.width, b.width, lr, eps);
}

__global__ void RowAdamKernel(RowBatch b, AdamSettings s, const float* table, uint32_t table_count) {
  const size_t u = ThreadIndex();
  if (u < b.count) RowAdamRow(RowOf(b, u), b.grads + u * b.width, b.width, s, table, table_count);
}

}  // namespace

cudaError_t LaunchDenseSgd(float* p, const float* g, size_t n, float lr, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DenseSgdKernel<<<Blocks(n), kBlock, 0, stream>>>(p, g, n, lr);
  return cudaGetLastError();
}

cudaError_t LaunchDenseAdagrad(float* p, float* acc, const float* g, size_t n, float lr, float eps,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DenseAdagradKernel<<<Blocks(n), kBlock, 0, stream>>>(p, acc, g, n, lr, eps);
  return cudaGetLastError();
}

cudaError_t LaunchDenseAdam(float* p, float* m, float* v, const float* g, size_t n, AdamSettings s, float c1,
                            float c2, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DenseAdamKernel<<<Blocks(n), kBlock, 0, stream>>>(p, m, v, g, n, s, c1, c2);
  return cudaGetLastError();
}

cudaError_t LaunchRowSgd(const RowBatch& b, float lr, cudaStream_t stream) {
  const size_t count = b.count * b.width;
  if (count == 0) return cudaSuccess;
  RowSgdKernel<<<Blocks(count), kBlock, 0, stream>>>(b, lr);
  return cudaGetLastError();
}

cudaError_t LaunchRowAdagrad(const RowBatch& b, float lr, float eps, cudaStream_t stream) {
  const size_t count = b.count * b.width;
  if (count == 0) return cudaSuccess;
  RowAdagradKernel<<<Blocks(count), kBlock, 0, stream>>>(b, lr, eps);
  return cudaGetLastError();
}

cudaError_t LaunchRowwiseAdagrad(const RowBatch& b, float lr, float eps, cudaStream_t stream) {
  if (b.count == 0) return cudaSuccess;
  RowwiseAdagradKernel<<<Blocks(b.count), kBlock, 0, stream>>>(b, lr, eps);
  return cudaGetLastError();
}

cudaError_t LaunchRowAdam(const RowBatch& b, AdamSettings s, const float* table, uint32_t table_count,
                          cudaStream_t stream) {
  if (b.count == 0) return cudaSuccess;
  RowAdamKernel<<<Blocks(b.count), kBlock, 0, stream>>>(b, s, table, table_count);
  return cudaGetLastError();
}

}  // namespace actorrec::gpu::cuda
