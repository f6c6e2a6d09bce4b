// The kernels of gpu/cuda/dense_kernels.cuh: one thread per output element,
// column or sample, each running a function of gpu/cuda/dense_ops.hpp.
// No atomics and no shared-memory reductions: every sum is one thread's
// loop in the CPU code's order, which is what makes the bits the CPU's.
// Built, not yet run on a GPU.
#include "gpu/cuda/dense_kernels.cuh"

#include "gpu/cuda/dense_ops.hpp"

namespace actorrec::gpu::cuda {
namespace {

constexpr unsigned kBlock = 256;

// Blocks for `count` threads; count > 0 and below 2^31 · kBlock.
unsigned Blocks(size_t count) { return static_cast<unsigned>((count + kBlock - 1) / kBlock); }

__device__ size_t ThreadIndex() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__global__ void BiasAddKernel(float* out, const float* bias, size_t count, size_t width, bool relu) {
  const size_t e = ThreadIndex();
  if (e < count) out[e] = BiasAdd(out[e], bias[e % width], relu);
}

__global__ void ReluGradKernel(const float* go, const float* out, float* gk, size_t count) {
  const size_t e = ThreadIndex();
  if (e < count) gk[e] = ReluGradOf(go[e], out[e]);
}

__global__ void ColumnSumsKernel(const float* x, size_t n, size_t width, float* sums) {
  const size_t j = ThreadIndex();
  if (j < width) sums[j] = ColumnSum(x, n, width, j);
}

__global__ void WeightedColumnSumsKernel(const float* c, const float* x, size_t n, size_t stride, size_t width,
                                         float* sums) {
  const size_t j = ThreadIndex();
  if (j < width) sums[j] = WeightedColumnSum(c, x, n, stride, j);
}

__global__ void BceKernel(const float* logits, const float* labels, size_t n, float scale, float* loss_terms,
                          float* dlogit) {
  const size_t i = ThreadIndex();
  if (i >= n) return;
  const BceTerms t = BceSample(logits[i], labels[i], scale);
  loss_terms[i] = t.loss;
  dlogit[i] = t.dlogit;
}

__global__ void InteractionForwardKernel(const float* z, const float* pooled, size_t n, size_t T, size_t d,
                                         size_t width, float* r) {
  const size_t e = ThreadIndex();
  if (e >= n * width) return;
  const size_t i = e / width, j = e % width;
  r[e] = InteractionOutput(z == nullptr ? nullptr : z + i * d, pooled + i * T * d, d, j);
}

// Threads [0, n·T·d) write dpooled, [n·T·d, n·(T + 1)·d) write dz (with
// z; without, z and dz are null and only the first range runs).
__global__ void InteractionBackwardKernel(const float* dr, const float* z, const float* pooled, size_t n, size_t T,
                                          size_t d, size_t width, float* dz, float* dpooled) {
  const size_t e = ThreadIndex();
  const size_t pooled_count = n * T * d;
  if (e < pooled_count) {
    const size_t i = e / (T * d), a = e / d % T, k = e % d;
    dpooled[e] = InteractionGradPooled(dr + i * width, z == nullptr ? nullptr : z + i * d, pooled + i * T * d, T, d,
                                       a, k);
  } else if (z != nullptr && e < pooled_count + n * d) {
    const size_t q = e - pooled_count, i = q / d, k = q % d;
    dz[q] = InteractionGradZ(dr + i * width, pooled + i * T * d, T, d, k);
  }
}

__global__ void DeepInputKernel(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C,
                                size_t d, size_t w, float* x) {
  const size_t xw = dd + T * d;
  const size_t e = ThreadIndex();
  if (e >= n * xw) return;
  const size_t i = e / xw;
  x[e] = DeepInput(dense + i * dd, pooled + i * (T + C) * w, dd, d, w, e % xw);
}

__global__ void WideDeepLogitsKernel(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                                     const float* bias, bool fm, float* sums, float* logits) {
  const size_t i = ThreadIndex();
  if (i >= n) return;
  const size_t w = d + 1;
  logits[i] = WideDeepLogit(deep[i], pooled + i * (T + C) * w, T, C, d, w, bias[0], fm, fm ? sums + i * d : nullptr);
}

__global__ void WideDeepPooledGradKernel(const float* dx, const float* pooled, const float* sums,
                                         const float* dlogit, size_t n, size_t dd, size_t T, size_t C, size_t d,
                                         float* pooled_grad) {
  const size_t w = d + 1, xw = dd + T * d, tables = T + C;
  const size_t e = ThreadIndex();
  if (e >= n * tables * w) return;
  const size_t i = e / (tables * w), t = e / w % tables, k = e % w;
  pooled_grad[e] = WideDeepPooledGrad(dx + i * xw, pooled + i * tables * w, sums ? sums + i * d : nullptr, dlogit[i],
                                      dd, T, d, w, t, k);
}

__global__ void CrossDotKernel(const float* a, const float* b, bool b_per_sample, size_t n, size_t d0, float* out) {
  const size_t i = ThreadIndex();
  if (i < n) out[i] = Dot8(a + i * d0, b_per_sample ? b + i * d0 : b, d0);
}

__global__ void CrossOutputKernel(const float* x0, const float* x, const float* b, const float* s, size_t n,
                                  size_t d0, float* next) {
  const size_t e = ThreadIndex();
  if (e >= n * d0) return;
  const size_t i = e / d0, k = e % d0;
  next[e] = CrossOutput(x0[e], s[i], b[k], x[e]);
}

__global__ void DcnLogitsKernel(const float* fw, const float* fb, const float* xl, const float* h, size_t n,
                                size_t d0, size_t hw, float* logits) {
  const size_t i = ThreadIndex();
  if (i < n) logits[i] = DcnLogit(fw, xl + i * d0, d0, hw > 0 ? h + i * hw : nullptr, hw, fb[0]);
}

// g = dlogit·fw[0, d0) and dh = dlogit·fw[d0, d0 + hw), per element.
__global__ void DcnFinalInputGradKernel(const float* dlogit, const float* fw, size_t n, size_t d0, size_t hw,
                                        float* g, float* dh) {
  const size_t width = d0 + hw;
  const size_t e = ThreadIndex();
  if (e >= n * width) return;
  const size_t i = e / width, k = e % width;
  const float v = Mul(dlogit[i], fw[k]);
  if (k < d0) {
    g[i * d0 + k] = v;
  } else {
    dh[i * hw + (k - d0)] = v;
  }
}

__global__ void CrossBackwardKernel(const float* w, const float* s, const float* gs, size_t n, size_t d0, float* g,
                                    float* dx0) {
  const size_t e = ThreadIndex();
  if (e >= n * d0) return;
  const size_t i = e / d0;
  CrossBackwardElement(g + e, dx0 + e, gs[i], s[i], w[e % d0]);
}

__global__ void DcnPooledGradKernel(const float* g, const float* dx0, size_t n, size_t d0, size_t dd,
                                    float* pooled_grad) {
  const size_t td = d0 - dd;
  const size_t e = ThreadIndex();
  if (e >= n * td) return;
  const size_t i = e / td, k = dd + e % td;
  pooled_grad[e] = Add(g[i * d0 + k], dx0[i * d0 + k]);
}

}  // namespace

cudaError_t LaunchBiasAdd(float* out, const float* bias, size_t n, size_t width, bool relu, cudaStream_t stream) {
  const size_t count = n * width;
  if (count == 0) return cudaSuccess;
  BiasAddKernel<<<Blocks(count), kBlock, 0, stream>>>(out, bias, count, width, relu);
  return cudaGetLastError();
}

cudaError_t LaunchReluGrad(const float* go, const float* out, float* gk, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  ReluGradKernel<<<Blocks(count), kBlock, 0, stream>>>(go, out, gk, count);
  return cudaGetLastError();
}

cudaError_t LaunchColumnSums(const float* x, size_t n, size_t width, float* sums, cudaStream_t stream) {
  if (width == 0) return cudaSuccess;
  ColumnSumsKernel<<<Blocks(width), kBlock, 0, stream>>>(x, n, width, sums);
  return cudaGetLastError();
}

cudaError_t LaunchBceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* loss_terms,
                                float* dlogit, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  BceKernel<<<Blocks(n), kBlock, 0, stream>>>(logits, labels, n, scale, loss_terms, dlogit);
  return cudaGetLastError();
}

cudaError_t LaunchInteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, float* r,
                                     cudaStream_t stream) {
  const size_t width = InteractionWidth(T, d, z != nullptr);
  if (n * width == 0) return cudaSuccess;
  InteractionForwardKernel<<<Blocks(n * width), kBlock, 0, stream>>>(z, pooled, n, T, d, width, r);
  return cudaGetLastError();
}

cudaError_t LaunchInteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T,
                                      size_t d, float* dz, float* dpooled, cudaStream_t stream) {
  const size_t width = InteractionWidth(T, d, z != nullptr), count = n * (T + (z != nullptr ? 1 : 0)) * d;
  if (count == 0) return cudaSuccess;
  InteractionBackwardKernel<<<Blocks(count), kBlock, 0, stream>>>(dr, z, pooled, n, T, d, width, dz, dpooled);
  return cudaGetLastError();
}

cudaError_t LaunchDeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C,
                            size_t d, size_t w, float* x, cudaStream_t stream) {
  const size_t count = n * (dd + T * d);
  if (count == 0) return cudaSuccess;
  DeepInputKernel<<<Blocks(count), kBlock, 0, stream>>>(dense, pooled, n, dd, T, C, d, w, x);
  return cudaGetLastError();
}

cudaError_t LaunchWideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                                 const float* bias, bool fm, float* sums, float* logits, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  WideDeepLogitsKernel<<<Blocks(n), kBlock, 0, stream>>>(deep, pooled, n, T, C, d, bias, fm, sums, logits);
  return cudaGetLastError();
}

cudaError_t LaunchWideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit,
                                     size_t n, size_t dd, size_t T, size_t C, size_t d, float* pooled_grad,
                                     cudaStream_t stream) {
  const size_t count = n * (T + C) * (d + 1);
  if (count == 0) return cudaSuccess;
  WideDeepPooledGradKernel<<<Blocks(count), kBlock, 0, stream>>>(dx, pooled, sums, dlogit, n, dd, T, C, d,
                                                                 pooled_grad);
  return cudaGetLastError();
}

cudaError_t LaunchCrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0,
                               float* s, float* next, cudaStream_t stream) {
  if (n == 0 || d0 == 0) return cudaSuccess;
  CrossDotKernel<<<Blocks(n), kBlock, 0, stream>>>(x, w, false, n, d0, s);
  CrossOutputKernel<<<Blocks(n * d0), kBlock, 0, stream>>>(x0, x, b, s, n, d0, next);
  return cudaGetLastError();
}

cudaError_t LaunchDcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0,
                            size_t hw, float* logits, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  DcnLogitsKernel<<<Blocks(n), kBlock, 0, stream>>>(fw, fb, xl, h, n, d0, hw, logits);
  return cudaGetLastError();
}

cudaError_t LaunchDcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n,
                                   size_t d0, size_t hw, float* gfw, float* gfb, float* g, float* dh,
                                   cudaStream_t stream) {
  if (d0 == 0) return cudaSuccess;
  // With no samples the sums are still written (+0), as the CPU's fills.
  WeightedColumnSumsKernel<<<Blocks(d0), kBlock, 0, stream>>>(dlogit, xl, n, d0, d0, gfw);
  if (hw > 0) WeightedColumnSumsKernel<<<Blocks(hw), kBlock, 0, stream>>>(dlogit, h, n, hw, hw, gfw + d0);
  ColumnSumsKernel<<<1, 1, 0, stream>>>(dlogit, n, 1, gfb);
  if (n > 0) DcnFinalInputGradKernel<<<Blocks(n * (d0 + hw)), kBlock, 0, stream>>>(dlogit, fw, n, d0, hw, g, dh);
  return cudaGetLastError();
}

cudaError_t LaunchCrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n,
                                size_t d0, float* g, float* dx0, float* gw, float* gb, float* gs,
                                cudaStream_t stream) {
  if (d0 == 0) return cudaSuccess;
  if (n > 0) CrossDotKernel<<<Blocks(n), kBlock, 0, stream>>>(g, x0, true, n, d0, gs);
  // The column sums read g before CrossBackwardKernel changes it (same stream).
  WeightedColumnSumsKernel<<<Blocks(d0), kBlock, 0, stream>>>(gs, x, n, d0, d0, gw);
  ColumnSumsKernel<<<Blocks(d0), kBlock, 0, stream>>>(g, n, d0, gb);
  if (n > 0) CrossBackwardKernel<<<Blocks(n * d0), kBlock, 0, stream>>>(w, s, gs, n, d0, g, dx0);
  return cudaGetLastError();
}

cudaError_t LaunchDcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd,
                                float* pooled_grad, cudaStream_t stream) {
  const size_t count = n * (d0 - dd);
  if (count == 0) return cudaSuccess;
  DcnPooledGradKernel<<<Blocks(count), kBlock, 0, stream>>>(g, dx0, n, d0, dd, pooled_grad);
  return cudaGetLastError();
}

}  // namespace actorrec::gpu::cuda
