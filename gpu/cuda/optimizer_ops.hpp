// The per-element (or per-row) work of the optimizer kernels
// (gpu/cuda/optimizer_kernels.cuh): models/optimizers.cpp's DenseOptimizer
// and RowOptimizer updates, the same operations in the same order with the
// same roundings (hd.hpp), so that the host tests
// (tests/gpu/cuda_optimizer_ops_test.cpp) compare them bit for bit.
//
// Rows are laid out as RowOptimizer documents: [width weights][state], the
// state of sgd none, adagrad [width] accumulators, rowwise_adagrad [1]
// accumulator, adam [width] m, [width] v, [1] the row's float step count.
//
// Bitwise with the CPU on the device too: every update here uses only + − ×
// ÷ and √, correctly rounded on both sides. The one transcendental is Adam's
// bias correction 1 − β^t (powf, 4 ulp on the device): the dense step takes
// it as arguments computed on the host (AdamCorrection), and the row step
// reads it from a table the host fills for t = 1 … count
// (FillAdamCorrections); a row whose step count is past the table computes
// it with the device's powf, which is the one case within a bound only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/hd.hpp"

namespace actorrec::gpu::cuda {

struct AdamSettings {
  float lr, beta1, beta2, eps;
};

// 1 − β^t, as the CPU computes it (std::pow(float, float), then 1 − it).
ACTORREC_HD float AdamCorrection(float beta, float step) { return Sub(1.0f, Pow(beta, step)); }

// table[2(t−1)] = 1 − β1^t and table[2(t−1) + 1] = 1 − β2^t for t = 1 …
// count, on the host: what the row kernel reads instead of powf.
inline void FillAdamCorrections(float beta1, float beta2, uint32_t count, float* table) {
  for (uint32_t t = 1; t <= count; ++t) {
    table[2 * (t - 1)] = AdamCorrection(beta1, static_cast<float>(t));
    table[2 * (t - 1) + 1] = AdamCorrection(beta2, static_cast<float>(t));
  }
}

// SGD, dense or row: p − lr·g.
ACTORREC_HD float SgdUpdate(float p, float g, float lr) { return Sub(p, Mul(lr, g)); }

// Adagrad, dense or row, one element: acc += g²; p −= lr·g / (√acc + ε).
ACTORREC_HD void AdagradUpdate(float* p, float* acc, float g, float lr, float eps) {
  const float a = Add(*acc, Mul(g, g));
  *acc = a;
  *p = Sub(*p, Div(Mul(lr, g), Add(Sqrt(a), eps)));
}

// Adam, dense or row, one element, with the corrections c1 = 1 − β1^t and
// c2 = 1 − β2^t of this step: m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g·g;
// p −= lr·(m / c1) / (√(v / c2) + ε).
ACTORREC_HD void AdamUpdate(float* p, float* m, float* v, float g, const AdamSettings& s, float c1, float c2) {
  const float mm = Add(Mul(s.beta1, *m), Mul(Sub(1.0f, s.beta1), g));
  const float vv = Add(Mul(s.beta2, *v), Mul(Mul(Sub(1.0f, s.beta2), g), g));
  *m = mm;
  *v = vv;
  *p = Sub(*p, Div(Mul(s.lr, Div(mm, c1)), Add(Sqrt(Div(vv, c2)), s.eps)));
}

// Row-wise Adagrad, one row: acc += (Σ_j g_j², j in order from +0) / width;
// then every weight −= (lr / (√acc + ε))·g_j.
ACTORREC_HD void RowwiseAdagradRow(float* row, const float* g, uint32_t width, float lr, float eps) {
  float sum = 0.0f;
  for (uint32_t j = 0; j < width; ++j) sum = Add(sum, Mul(g[j], g[j]));
  float& acc = row[width];
  acc = Add(acc, Div(sum, static_cast<float>(width)));
  const float scale = Div(lr, Add(Sqrt(acc), eps));
  for (uint32_t j = 0; j < width; ++j) row[j] = Sub(row[j], Mul(scale, g[j]));
}

// Lazy Adam, one row: its own step count advances (step + 1 as a float, as
// the CPU), then every weight takes AdamUpdate with that step's
// corrections: from table (FillAdamCorrections, `count` steps) when the
// step is in it, else computed here.
ACTORREC_HD void RowAdamRow(float* row, const float* g, uint32_t width, const AdamSettings& s,
                            const float* table, uint32_t count) {
  float* m = row + width;
  float* v = m + width;
  float& step_count = v[width];
  const float step = Add(step_count, 1.0f);
  step_count = step;
  // A whole number in [1, count] indexes the table exactly; anything else
  // (past the table, or a state that is not a count) never indexes it.
  const bool tabled = table != nullptr && step >= 1.0f && step <= static_cast<float>(count) &&
                      static_cast<float>(static_cast<uint32_t>(step)) == step;
  const size_t t = tabled ? static_cast<size_t>(step) - 1 : 0;
  const float c1 = tabled ? table[2 * t] : AdamCorrection(s.beta1, step);
  const float c2 = tabled ? table[2 * t + 1] : AdamCorrection(s.beta2, step);
  for (uint32_t j = 0; j < width; ++j) AdamUpdate(row + j, m + j, v + j, g[j], s, c1, c2);
}

}  // namespace actorrec::gpu::cuda
