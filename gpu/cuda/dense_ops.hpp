// The per-element work of the CUDA kernels of the models' ops besides GEMM
// and pooling (gpu/cuda/dense_kernels.cuh launches them): the MLP's bias,
// ReLU and bias gradient, BCE with logits, DLRM's interaction, the pieces of
// Wide&Deep/DeepFM and of DCN's cross layers. Each function computes one
// output (one element, one column or one sample) exactly as the CPU code in
// models/ does, in the same order with the same roundings (hd.hpp: no FMA),
// so that the host tests (tests/gpu/cuda_dense_ops_test.cpp) compare them
// with the CPU code bit for bit.
//
// Bitwise with the CPU on the device too: everything here but BceSample,
// which calls expf and log1pf (hd.hpp's Exp, Log1p): on the device those
// are CUDA's (2 and 1 ulp bounds), on the host glibc's, so the device's loss
// terms and dlogits are within kBceTolerance of the CPU's, not equal
// (docs/gpu.md, "Kernels of the model's ops").
//
// Layouts are the CPU code's: row-major, sample-major; "the sample's" means
// a pointer already advanced to sample i.
#pragma once

#include <cmath>
#include <cstddef>

#include "gpu/cuda/hd.hpp"

namespace actorrec::gpu::cuda {

// ---------------------------------------------------------------- MLP
// gpu/cpu_ops.cpp: AddBias, ReluGrad, BiasGrad.

// std::max(v, 0.0f), which is v < 0 ? 0 : v: it keeps −0 and NaN (fmaxf
// would not).
ACTORREC_HD float Relu(float v) { return v < 0.0f ? 0.0f : v; }

// One output of a linear layer after its GEMM: o + b, then the ReLU.
ACTORREC_HD float BiasAdd(float o, float b, bool relu) {
  const float v = Add(o, b);
  return relu ? Relu(v) : v;
}

// The ReLU's gradient: g where the output is > 0, else 0 (also at the kink).
ACTORREC_HD float ReluGradOf(float g, float out) { return out > 0.0f ? g : 0.0f; }

// Column j of a column sum: Σ_i x[i·stride + j] over i = 0 … n−1 in order,
// from +0. The bias gradient (db[j] of g, n × width) is ColumnSum(g, n,
// width, j); one thread per column, no atomics.
ACTORREC_HD float ColumnSum(const float* x, size_t n, size_t stride, size_t j) {
  float s = 0.0f;
  for (size_t i = 0; i < n; ++i) s = Add(s, x[i * stride + j]);
  return s;
}

// Σ_i c[i]·x[i·stride + j], i in order from +0, each product rounded: a
// weight gradient of a rank-one layer (DCN's cross and final weights).
ACTORREC_HD float WeightedColumnSum(const float* c, const float* x, size_t n, size_t stride, size_t j) {
  float s = 0.0f;
  for (size_t i = 0; i < n; ++i) s = Add(s, Mul(c[i], x[i * stride + j]));
  return s;
}

// ---------------------------------------------------------------- dot product
// models/layers.hpp's Dot(): lane j (0..7) sums the k ≡ j (mod 8) below the
// last full group of eight in ascending k; the lanes combine as
// ((l0+l4)+(l1+l5)) + ((l2+l6)+(l3+l7)); the tail k adds last, ascending.
ACTORREC_HD float Dot8(const float* a, const float* b, size_t n) {
  float l[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (size_t j = 0; j < 8; ++j) l[j] = Add(l[j], Mul(a[k + j], b[k + j]));
  }
  float s = Add(Add(Add(l[0], l[4]), Add(l[1], l[5])), Add(Add(l[2], l[6]), Add(l[3], l[7])));
  for (; k < n; ++k) s = Add(s, Mul(a[k], b[k]));
  return s;
}

// ---------------------------------------------------------------- BCE
// gpu/cpu_ops.cpp BceWithLogits, one sample: the loss term
// (max(z, 0) − z·y) + log1p(exp(−|z|)) as a float (the CPU then sums it as
// double in i order: SumLossTerms) and dlogit = scale·(σ(z) − y), σ from
// exp(−|z|), which never overflows.
struct BceTerms {
  float loss;
  float dlogit;
};

// The same from e = exp(−|z|) and l = log1p(e) given: what the host test
// uses to perturb e and l by the device's ulp bounds.
ACTORREC_HD BceTerms BceFromExp(float z, float y, float scale, float e, float l) {
  const float m = z < 0.0f ? 0.0f : z;  // std::max(z, 0.0f)
  const float loss = Add(Sub(m, Mul(z, y)), l);
  const float one_e = Add(1.0f, e);
  const float sigma = z >= 0.0f ? Div(1.0f, one_e) : Div(e, one_e);
  return {loss, Mul(scale, Sub(sigma, y))};
}

ACTORREC_HD BceTerms BceSample(float z, float y, float scale) {
  const float e = Exp(-std::fabs(z));
  return BceFromExp(z, y, scale, e, Log1p(e));
}

// Σ_i terms[i] as double, i in order: the CPU's loss. It runs on the host
// over the per-sample terms copied back (n floats, 8 KiB at 2048 samples):
// the loss is read only on the host, and one device thread summing 16 k
// values serially would sit on the compute stream's critical path.
ACTORREC_HD double SumLossTerms(const float* terms, size_t n) {
  double loss = 0.0;
  for (size_t i = 0; i < n; ++i) loss += static_cast<double>(terms[i]);
  return loss;
}

// The device's loss term and dlogit are within these of the CPU's when
// expf is within 2 ulp and log1pf within 1 ulp (the CUDA guide's bounds):
// |Δloss| ≤ kBceTolerance·max(1, |loss|), |Δdlogit| ≤ kBceTolerance·|scale|.
// 2^-21 is 8 ulp of 1; the host test perturbs e and l by ±3 and ±2 ulp
// (those bounds plus glibc's own error) over z from −110 to 110 and finds
// at most 2^-23 (tests/gpu/cuda_dense_ops_test.cpp).
inline constexpr float kBceTolerance = 1.0f / 2097152.0f;  // 2^-21

// ---------------------------------------------------------------- DLRM interaction
// gpu/cpu_ops.cpp InteractionForward / InteractionBackward. With dense
// features a sample's output has width d + T(T+1)/2: z, then for
// a = 1 … T the dot products ⟨F_a, F_b⟩, b = 0 … a−1 (F_0 = z, F_a = the
// pooled vector of table a−1). Without (z null: no bottom MLP) it has width
// T(T−1)/2: for a = 1 … T−1 the products ⟨F_a, F_b⟩, b = 0 … a−1, with
// F_a = the pooled vector of table a.

ACTORREC_HD size_t InteractionWidth(size_t T, size_t d, bool with_z) {
  return with_z ? d + T * (T + 1) / 2 : (T == 0 ? 0 : T * (T - 1) / 2);
}

// The row a ≥ 1 and column b < a of pair t (0-based, after z's d floats).
ACTORREC_HD void InteractionPairOf(size_t t, size_t* a, size_t* b) {
  size_t r = static_cast<size_t>((1.0 + std::sqrt(1.0 + 8.0 * static_cast<double>(t))) / 2.0);
  while (r > 1 && (r - 1) * r / 2 > t) --r;  // the square root's rounding, either way
  while (r * (r + 1) / 2 <= t) ++r;
  *a = r;
  *b = t - (r - 1) * r / 2;
}

// Output j of one sample (z null without dense features): z[j] for j < d
// when there is z, else its pair's dot product, the d products summed in k
// order from +0 (not Dot8's order: the CPU vectorizes across pairs here).
ACTORREC_HD float InteractionOutput(const float* z, const float* pooled, size_t d, size_t j) {
  const size_t s = z != nullptr ? 1 : 0, head = s * d;  // F_s is table 0's vector
  if (j < head) return z[j];
  size_t a = 0, b = 0;
  InteractionPairOf(j - head, &a, &b);
  const float* fa = pooled + (a - s) * d;
  const float* fb = s != 0 && b == 0 ? z : pooled + (b - s) * d;
  float acc = 0.0f;
  for (size_t k = 0; k < d; ++k) acc = Add(acc, Mul(fa[k], fb[k]));
  return acc;
}

// The gradient of the product of tables a ≠ b (the symmetric matrix G of
// the CPU code; its diagonal is 0), from the sample's dr.
ACTORREC_HD float InteractionPairGrad(const float* dr, size_t d, bool with_z, size_t a, size_t b) {
  if (a == b) return 0.0f;
  const size_t hi = a > b ? a : b, lo = a > b ? b : a;
  return with_z ? dr[d + hi * (hi + 1) / 2 + 1 + lo] : dr[hi * (hi - 1) / 2 + lo];
}

// dpooled of table a, element k: Σ_b G_ab·P_b[k], b ascending from 0 and
// from +0 (the zero diagonal included, as the CPU), then + g_a0·z[k] when
// there is z (z null: nothing added, as the CPU).
ACTORREC_HD float InteractionGradPooled(const float* dr, const float* z, const float* pooled, size_t T, size_t d,
                                        size_t a, size_t k) {
  const bool with_z = z != nullptr;
  float acc = 0.0f;
  for (size_t b = 0; b < T; ++b) acc = Add(acc, Mul(InteractionPairGrad(dr, d, with_z, a, b), pooled[b * d + k]));
  return with_z ? Add(acc, Mul(dr[d + a * (a + 1) / 2], z[k])) : acc;
}

// dz element k (with dense features only): dr[k] + Σ_a g_a0·P_a[k], a
// ascending.
ACTORREC_HD float InteractionGradZ(const float* dr, const float* pooled, size_t T, size_t d, size_t k) {
  float s = dr[k];
  for (size_t a = 0; a < T; ++a) s = Add(s, Mul(dr[d + a * (a + 1) / 2], pooled[a * d + k]));
  return s;
}

// ---------------------------------------------------------------- Wide&Deep, DeepFM
// models/wide_deep.cpp. A pooled vector has width w = d + 1 (d embedding
// floats, then the row's first-order weight); DCN's has w = d. A sample has
// T + C of them: the T tables the deep part sees, then C wide-only tables
// (Wide&Deep's crosses) whose weight alone enters the logit.

// Element j of the deep tower's input [dense, e_1[0, d) … e_T[0, d)] of one
// sample (dd dense features): also DCN's x0 (w = d).
ACTORREC_HD float DeepInput(const float* dense, const float* pooled, size_t dd, size_t d, size_t w, size_t j) {
  if (j < dd) return dense[j];
  const size_t t = (j - dd) / d, k = (j - dd) % d;
  return pooled[t * w + k];
}

// Σ_t w_t (the first-order weights at pooled[t·w + d]), t in order from +0.
ACTORREC_HD float FirstOrderSum(const float* pooled, size_t T, size_t d, size_t w) {
  float s = 0.0f;
  for (size_t t = 0; t < T; ++t) s = Add(s, pooled[t * w + d]);
  return s;
}

// FM's s_k = Σ_t e_tk, t in order from +0.
ACTORREC_HD float FmSum(const float* pooled, size_t T, size_t w, size_t k) {
  float s = 0.0f;
  for (size_t t = 0; t < T; ++t) s = Add(s, pooled[t * w + k]);
  return s;
}

// One sample's logit: (deep + Σ_t w_t over all T + C) + bias; with fm
// (sums: the sample's d floats s_k, written here for the backward), +
// ½·(Dot(s, s) − Σ_t Dot(e_t, e_t)) over the T, the squares summed in t
// order from +0.
ACTORREC_HD float WideDeepLogit(float deep, const float* pooled, size_t T, size_t C, size_t d, size_t w, float bias,
                                bool fm, float* sums) {
  float logit = Add(Add(deep, FirstOrderSum(pooled, T + C, d, w)), bias);
  if (!fm) return logit;
  for (size_t k = 0; k < d; ++k) sums[k] = FmSum(pooled, T, w, k);
  float squares = 0.0f;
  for (size_t t = 0; t < T; ++t) squares = Add(squares, Dot8(pooled + t * w, pooled + t * w, d));
  return Add(logit, Mul(0.5f, Sub(Dot8(sums, sums, d), squares)));
}

// pooled_grad of one sample at table t, element k ≤ d: the deep input's
// gradient dx[dd + t·d + k] (plus, with fm, g·(s_k − e_tk)) for k < d, and
// g (∂logit/∂w_t = 1) for k = d; for a wide-only table (t ≥ T) 0 for k < d.
// dx is the sample's row of the deep input gradient; sums null unless fm.
ACTORREC_HD float WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, float g, size_t dd,
                                     size_t T, size_t d, size_t w, size_t t, size_t k) {
  if (k == d) return g;
  if (t >= T) return 0.0f;
  const float v = dx[dd + t * d + k];
  if (sums == nullptr) return v;
  return Add(v, Mul(g, Sub(sums[k], pooled[t * w + k])));
}

// ---------------------------------------------------------------- DCN
// models/dcn.cpp: x_{l+1} = x0·(x_l·w_l) + b_l + x_l, s = Dot(x_l, w_l).

// Element k of x_{l+1}: (x0_k·s + b_k) + x_k.
ACTORREC_HD float CrossOutput(float x0k, float s, float bk, float xk) { return Add(Add(Mul(x0k, s), bk), xk); }

// One sample's logit: Dot(fw, x_L) (+ Dot(fw[d0 …], h) when hw > 0) + fb.
ACTORREC_HD float DcnLogit(const float* fw, const float* xl, size_t d0, const float* h, size_t hw, float fb) {
  float z = Dot8(fw, xl, d0);
  if (hw > 0) z = Add(z, Dot8(fw + d0, h, hw));
  return Add(z, fb);
}

// The backward of one cross layer for one sample, element k, given the
// sample's gs = Dot(g, x0) (taken before any element changes): dx0 gets
// g_k·s, g becomes g_k + gs·w_k (∂/∂x_l). The layer's weight gradient is
// WeightedColumnSum(gs, x_l) and its bias gradient ColumnSum(g), both over
// the g of before this step.
ACTORREC_HD void CrossBackwardElement(float* g, float* dx0, float gs, float s, float wk) {
  const float gk = *g;
  *dx0 = Add(*dx0, Mul(gk, s));
  *g = Add(gk, Mul(gs, wk));
}

}  // namespace actorrec::gpu::cuda
