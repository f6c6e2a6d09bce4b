// The host arithmetic of the models' element-wise ops: the MLP's bias,
// ReLU and bias gradient, BCE with logits, DLRM's interaction, the pieces of
// Wide&Deep/DeepFM and of DCN's cross network. They are
// the CPU's side of gpu::Backend's model ops (backend.hpp; every backend
// whose memory is the host's runs them) and what the CUDA kernels' host
// tests compare with (tests/gpu/cuda_dense_ops_test.cpp).
//
// Determinism: every sum runs in an order fixed by the code (stated on each
// function), never by threads, vector width or the compiler. Built with
// -ffp-contract=off and -fno-math-errno (gpu/meson.build), as models/ is.
// The definitions are cloned for the CPU's vector width
// (ACTORREC_VECTOR_CLONES); the attribute stays off these declarations, or
// every includer would emit a resolver of its own.
#pragma once

#include <cstddef>
#include <algorithm>

namespace actorrec::gpu::cpu {

// Σ_k a[k]·b[k]: lane j (0..7) sums the k ≡ j (mod 8) below the last full
// group of eight, in ascending k; the lanes combine as
// ((l0+l4)+(l1+l5)) + ((l2+l6)+(l3+l7)); the tail k adds last, ascending.
inline float Dot(const float* a, const float* b, size_t n) {
  float l[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (size_t j = 0; j < 8; ++j) l[j] += a[k + j] * b[k + j];
  }
  float s = ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]));
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

// Σ_i BCEWithLogits(z_i, y_i) in double, summed in i order, computed as
// max(z, 0) − z·y + log1p(exp(−|z|)) (no overflow for any finite z); and
// dlogit_i = scale · (σ(z_i) − y_i).
double BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit);

// out = max(out + bias, 0) (relu) or out + bias, per row of `width`.
void AddBias(float* out, const float* bias, size_t n, int width, bool relu);
// The ReLU's gradient: gk = go where out > 0, else 0 (the subgradient 0 at
// the kink, as PyTorch). The three buffers are distinct.
void ReluGrad(const float* __restrict go, const float* __restrict out, float* __restrict gk, size_t count);
// db[j] = Σ_i g[i·width + j], samples in order from +0.
void BiasGrad(const float* g, size_t n, int width, float* db);

// DLRM's interaction over n samples (the definition states each sum's
// order): r (n × width) from z (n × d) and pooled (n × T × d); z null means
// no dense features (no z in F nor in r); columns is scratch of
// InteractionColumnsFloats(T, d, z != null) floats.
void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width, float* r,
                        float* columns);
size_t InteractionColumnsFloats(size_t T, size_t d, bool with_z);

// Wide&Deep and DeepFM (models/wide_deep.cpp); pooled rows of w = d + 1
// floats (d embedding floats, then the first-order weight), T + C of them a
// sample: the T tables the deep part sees, then C wide-only ones (Wide&Deep's
// crosses, whose weight alone is read); deep inputs of dd + T·d floats a
// sample.
// x = [dense, e_1[0, d) … e_T[0, d)] per sample, pooled rows of w floats
// (d + 1 here; d for DCN's x0, with C = 0).
void DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d, size_t w,
               float* x);
// logits[i] = deep[i] + Σ_t w_t (t ascending over all T + C, from +0) +
// bias[0]; with fm, + 0.5·(Dot(s, s) − Σ_t Dot(e_t, e_t)), s = Σ_t e_t over
// the T (sums, n × d, kept for the backward).
void WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d, const float* bias,
                    bool fm, float* sums, float* logits);
// pooled_grad (n × (T + C) × w): dx's embedding part, g = dlogit[i] for w_t,
// and with fm (sums not null) + g·(s_k − e_tk); a wide-only table's
// embedding part 0.
void WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit, size_t n,
                        size_t dd, size_t T, size_t C, size_t d, float* pooled_grad);
// Deep&Cross (models/dcn.cpp), rows of d0 floats: x_{l+1} = x0·s + b + x_l
// with s = Dot(x_l, w). One cross layer: s[i] = Dot(x_i, w), then element
// k of next_i = (x0_ik·s[i] + b_k) + x_ik.
void CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0, float* s,
                  float* next);
// logits[i] = Dot(fw, xl_i) (+ Dot(fw + d0, h_i) when hw > 0) + fb[0].
void DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0, size_t hw,
               float* logits);
// The final layer's backward, samples in order: gfw[k] += dlogit_i·[x_L, h]_ik
// and gfb += dlogit_i from +0; g_i = dlogit_i·fw[0, d0), dh_i =
// dlogit_i·fw[d0, d0 + hw).
void DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n, size_t d0,
                      size_t hw, float* gfw, float* gfb, float* g, float* dh);
// One cross layer's backward, samples in order: gs = Dot(g_i, x0_i); then
// per k: gw[k] += gs·x_ik, gb[k] += g_ik (both from +0), dx0_ik += g_ik·s[i],
// g_ik += gs·w_k.
void CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0, float* g,
                   float* dx0, float* gw, float* gb);
// pooled_grad_i[k] = g_i[dd + k] + dx0_i[dd + k], k < d0 − dd.
void DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad);

// dz (n × d) and dpooled (n × T × d) from dr (n × width); z and dz both null
// without dense features; G is scratch of T × T floats.
void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                         size_t width, float* dz, float* dpooled, float* G);

}  // namespace actorrec::gpu::cpu
