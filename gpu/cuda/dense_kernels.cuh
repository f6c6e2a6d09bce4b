// Launchers of the kernels of the models' ops besides GEMM and pooling: the
// MLP's bias/ReLU/bias gradient, BCE, DLRM's interaction, Wide&Deep/DeepFM
// and DCN pieces. Each kernel runs one function of gpu/cuda/dense_ops.hpp
// per thread (the host tests check those against the CPU code bit for bit);
// docs/gpu.md says which ops equal the CPU's bits on the device and which
// only within a bound.
//
// Every pointer is device memory, every layout the CPU code's (models/).
// Each launcher enqueues on `stream` (the last argument) and returns
// cudaGetLastError() of the launch, nothing synchronous; a zero-size call
// launches nothing. Built, not yet run on a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace actorrec::gpu::cuda {

// ---- MLP (gpu/cpu_ops.cpp)
// out = out + bias (relu: max(out + bias, 0)), per row of width.
cudaError_t LaunchBiasAdd(float* out, const float* bias, size_t n, size_t width, bool relu, cudaStream_t stream);
// gk = out > 0 ? go : 0, count elements.
cudaError_t LaunchReluGrad(const float* go, const float* out, float* gk, size_t count, cudaStream_t stream);
// sums[j] = Σ_i x[i·width + j], i in order: the bias gradient; one thread
// per column.
cudaError_t LaunchColumnSums(const float* x, size_t n, size_t width, float* sums, cudaStream_t stream);

// ---- BCE with logits (gpu/cpu_ops.cpp BceWithLogits)
// loss_terms[i] and dlogit[i] of each sample; the loss is
// SumLossTerms(loss_terms) on the host (dense_ops.hpp says why).
cudaError_t LaunchBceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* loss_terms,
                                float* dlogit, cudaStream_t stream);

// ---- DLRM interaction (gpu/cpu_ops.cpp), width = InteractionWidth(T, d, z
// not null): d + T(T+1)/2, or T(T−1)/2 without dense features (z and dz null)
// r (n × width) from z (n × d) and pooled (n × T × d).
cudaError_t LaunchInteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, float* r,
                                     cudaStream_t stream);
// dz (n × d) and dpooled (n × T × d) from dr (n × width).
cudaError_t LaunchInteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T,
                                      size_t d, float* dz, float* dpooled, cudaStream_t stream);

// ---- Wide&Deep / DeepFM (models/wide_deep.cpp); DCN's x0 too
// x (n × (dd + T·d)) = [dense, e_1[0, d) … e_T[0, d)] per sample, from
// dense (n × dd) and pooled (n × (T + C) × w: C wide-only tables after the
// T, Wide&Deep's crosses; 0 for DCN).
cudaError_t LaunchDeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C,
                            size_t d, size_t w, float* x, cudaStream_t stream);
// logits[i] from the deep tower's output (n × 1), pooled (n × (T + C) × w,
// w = d + 1) and the bias (one device float); with fm also sums (n × d).
cudaError_t LaunchWideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                                 const float* bias, bool fm, float* sums, float* logits, cudaStream_t stream);
// pooled_grad (n × (T + C) × w) from the deep input's gradient dx (n × (dd
// + T·d)) and dlogit; sums (from LaunchWideDeepLogits) only with fm, else
// null. The bias gradient is LaunchColumnSums(dlogit, n, 1).
cudaError_t LaunchWideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit,
                                     size_t n, size_t dd, size_t T, size_t C, size_t d, float* pooled_grad,
                                     cudaStream_t stream);

// ---- DCN (models/dcn.cpp), rows of d0 floats
// One cross layer: s[i] = Dot(x_i, w) (kept for the backward), then next =
// x0·s + b + x.
cudaError_t LaunchCrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0,
                               float* s, float* next, cudaStream_t stream);
// logits[i] = Dot(fw, x_L) (+ Dot(fw[d0 …], h) when hw > 0) + fb[0].
cudaError_t LaunchDcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0,
                            size_t hw, float* logits, cudaStream_t stream);
// The final layer's backward: gfw (d0 + hw), gfb (1), g = ∂/∂x_L (n × d0),
// dh = ∂/∂h (n × hw; unused when hw = 0).
cudaError_t LaunchDcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n,
                                   size_t d0, size_t hw, float* gfw, float* gfb, float* g, float* dh,
                                   cudaStream_t stream);
// One cross layer's backward, layers taken from the last: gs (n scratch
// floats) = Dot(g, x0) per sample, gw and gb (d0 each) from g as it comes
// in, then dx0 += g·s and g += gs·w (g leaves as ∂/∂x_l).
cudaError_t LaunchCrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n,
                                size_t d0, float* g, float* dx0, float* gw, float* gb, float* gs,
                                cudaStream_t stream);
// pooled_grad (n × T·d) = g + dx0 over x0's embedding part (after dd).
cudaError_t LaunchDcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd,
                                float* pooled_grad, cudaStream_t stream);

}  // namespace actorrec::gpu::cuda
