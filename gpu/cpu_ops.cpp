#include "gpu/cpu_ops.hpp"

// DLRM's interaction runs as direct loops that vectorize across dot products
// (forward) and across the embedding dimension (backward), compiled for the
// CPU's widest vectors (ACTORREC_VECTOR_CLONES). Measured on this project's
// 2-core AVX-512 VM (T = 26, D = 16, a trainer's 1024 samples, one thread):
// the interaction took 0.78 ms forward as a Dot() per pair and 0.69 ms
// backward as one sgemm per sample; as below about 0.5 and 0.4 ms (perf
// self time), next to ~13 ms of MLP GEMMs. With the MLP's elementwise loops
// also cloned, forward + backward went from 15.1 to 14.6 ms (192–197 to
// 198–205 GFLOP/s of the model's GEMM FLOPs).

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/vector_clones.hpp"

namespace actorrec::gpu::cpu {

double BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit) {
  double loss = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const float z = logits[i], y = labels[i];
    loss += static_cast<double>(std::max(z, 0.0f) - z * y + std::log1p(std::exp(-std::fabs(z))));
    // σ(z) from exp(−|z|), which never overflows.
    const float e = std::exp(-std::fabs(z));
    const float sigma = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    dlogit[i] = scale * (sigma - y);
  }
  return loss;
}

// The MLP's elementwise loops (layers.hpp), one function each so that they
// can be cloned for the CPU's vector width (ACTORREC_VECTOR_CLONES).

ACTORREC_VECTOR_CLONES
void AddBias(float* out, const float* bias, size_t n, int width, bool relu) {
  for (size_t i = 0; i < n; ++i) {
    float* o = out + i * width;
    if (relu) {
      for (int j = 0; j < width; ++j) o[j] = std::max(o[j] + bias[j], 0.0f);
    } else {
      for (int j = 0; j < width; ++j) o[j] += bias[j];
    }
  }
}

// Both loads unconditional and the buffers distinct: the select vectorizes
// instead of branching per element (it took most of Backward's own time).
ACTORREC_VECTOR_CLONES
void ReluGrad(const float* __restrict go, const float* __restrict out, float* __restrict gk, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    const float v = go[k];
    gk[k] = out[k] > 0.0f ? v : 0.0f;
  }
}

// Vectorized over the outputs.
ACTORREC_VECTOR_CLONES
void BiasGrad(const float* g, size_t n, int width, float* db) {
  std::fill(db, db + width, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    const float* gi = g + i * width;
    for (int j = 0; j < width; ++j) db[j] += gi[j];
  }
}

namespace {

// The interaction is two small matrix products per sample, F·Fᵀ forward
// and G·P backward (F the sample's T + 1 vectors, T without dense
// features; G the pair gradients),
// written out here: at T = 26, D = 16 a library call per sample cost more
// than its arithmetic. Each product keeps kRows × kLanes sums in vector
// registers: kLanes outputs per vector operation, and kRows independent
// chains of additions, so that the adds' latency overlaps. Every output is
// a plain sum in a fixed order (below), the same on any vector width.
//
// GCC's vector extension says "one vector" outright (its loop vectorizer
// kept an array of 16 accumulators in 16 scalar registers); on a CPU without
// 16-float registers a Lanes operation runs as several narrower ones. The
// functions taking or returning Lanes are always inlined into the clones, so
// their ABI (-Wpsabi's concern) never shows.
#pragma GCC diagnostic ignored "-Wpsabi"
constexpr size_t kLanes = 16;
constexpr size_t kRows = 4;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float)), aligned(sizeof(float)), may_alias));

template <class V>
[[gnu::always_inline]] inline V Load(const float* p) {
  if constexpr (std::is_same_v<V, float>) {
    return *p;
  } else {
    return *reinterpret_cast<const Lanes*>(p);
  }
}

template <class V>
[[gnu::always_inline]] inline void Store(const V& v, float* p) {
  if constexpr (std::is_same_v<V, float>) {
    *p = v;
  } else {
    *reinterpret_cast<Lanes*>(p) = v;
  }
}

}  // namespace

// The interaction's outputs for n samples, `width` floats each. With dense
// features F = [z_i, e_1 … e_T] and the output starts with z_i; without
// (z null) F = [e_1 … e_T] and the output is the pairs alone. Then for
// a = 1 … |F| − 1 the dot products ⟨F_a, F_b⟩ for b = 0 … a−1. Every dot
// product sums its d products in k order from 0. The sample's vectors are
// first transposed into `columns` (d rows of Fp = |F| rounded up to kLanes
// floats), so that one vector of a column row advances kLanes dot products
// by one k.
ACTORREC_VECTOR_CLONES
void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width, float* r,
                        float* columns) {
  const size_t s = z != nullptr ? 1 : 0;  // F_s is table 0's vector
  const size_t F = T + s, Fp = (F + kLanes - 1) / kLanes * kLanes, head = s * d;
  for (size_t i = 0; i < n; ++i) {
    const float* p = pooled + i * T * d;
    for (size_t k = 0; k < d; ++k) {
      float* column = columns + k * Fp;
      if (s != 0) column[0] = z[i * d + k];
      for (size_t b = s; b < F; ++b) column[b] = p[(b - s) * d + k];
    }
    float* out = r + i * width;
    if (s != 0) std::copy(z + i * d, z + i * d + d, out);
    // Rows a … a + kRows − 1 at once (past F − 1: row F − 1 again, not stored).
    for (size_t a = 1; a < F; a += kRows) {
      const float* f[kRows];
      for (size_t q = 0; q < kRows; ++q) f[q] = p + (std::min(a + q, F - 1) - s) * d;
      const size_t last = std::min(a + kRows - 1, F - 1);
      for (size_t b0 = 0; b0 < last; b0 += kLanes) {
        Lanes acc[kRows] = {};
        for (size_t k = 0; k < d; ++k) {
          const Lanes column = Load<Lanes>(columns + k * Fp + b0);
          for (size_t q = 0; q < kRows; ++q) acc[q] += f[q][k] * column;
        }
        for (size_t q = 0; q < kRows && a + q <= last; ++q) {
          // Row a + q holds a + q products, from head + (a + q − 1)(a + q)/2.
          const size_t row = a + q;
          if (b0 >= row) continue;
          const size_t m = std::min(kLanes, row - b0);
          float* o = out + head + (row - 1) * row / 2 + b0;
          for (size_t j = 0; j < m; ++j) o[j] = acc[q][j];
        }
      }
    }
  }
}

namespace {

// From dr (the interaction's gradient, `width` floats a sample) to dz (the
// bottom output's) and dpooled. With g_ab the gradient of ⟨e_a, e_b⟩ (tables
// a, b), symmetric, G its T × T matrix (zero diagonal), and g_a0 the
// gradient of ⟨e_a, z⟩:
//   dP_a = Σ_b G_ab P_b, b ascending from 0, then + g_a0 z (with z only);
//   dz = dr[0, d) + Σ_a g_a0 P_a, a ascending (with z only).
// Without dense features (z and dz null) the pairs start at dr[0] and no
// z term is added.
// V is Lanes when d is a multiple of kLanes, else float: the same sums in
// the same order either way. G is scratch of T × T floats.
template <class V>
[[gnu::always_inline]] inline void InteractionBackwardIn(const float* dr, const float* z, const float* pooled, size_t n,
                                                         size_t T, size_t d, size_t width, float* dz, float* dpooled,
                                                         float* G) {
  constexpr size_t kWidth = sizeof(V) / sizeof(float);
  const bool with_z = z != nullptr;
  for (size_t i = 0; i < n; ++i) {
    const float* dri = dr + i * width;
    const float* p = pooled + i * T * d;
    float* dp = dpooled + i * T * d;
    // With z, table a's row of the lower triangle is at d + a(a+1)/2: z's
    // pair, then tables 0 … a−1. Without, it is at a(a−1)/2: tables 0 … a−1.
    const float* g = with_z ? dri + d : dri;
    auto z_pair = [g](size_t a) { return g[a * (a + 1) / 2]; };
    for (size_t a = 0; a < T; ++a) {
      const float* row = with_z ? g + a * (a + 1) / 2 + 1 : g + (a == 0 ? 0 : a * (a - 1) / 2);
      G[a * T + a] = 0.0f;
      for (size_t b = 0; b < a; ++b) G[a * T + b] = G[b * T + a] = row[b];
    }
    // Rows a … a + kRows − 1 at once (past T − 1: row T − 1 again, not stored).
    for (size_t a = 0; a < T; a += kRows) {
      const float* grow[kRows];
      for (size_t q = 0; q < kRows; ++q) grow[q] = G + std::min(a + q, T - 1) * T;
      for (size_t k0 = 0; k0 < d; k0 += kWidth) {
        V acc[kRows] = {};
        for (size_t b = 0; b < T; ++b) {
          const V pb = Load<V>(p + b * d + k0);
          for (size_t q = 0; q < kRows; ++q) acc[q] += grow[q][b] * pb;
        }
        if (with_z) {
          const V zk = Load<V>(z + i * d + k0);
          for (size_t q = 0; q < kRows && a + q < T; ++q) Store<V>(acc[q] + z_pair(a + q) * zk, dp + (a + q) * d + k0);
        } else {
          for (size_t q = 0; q < kRows && a + q < T; ++q) Store<V>(acc[q], dp + (a + q) * d + k0);
        }
      }
    }
    if (!with_z) continue;
    float* dzi = dz + i * d;
    std::copy(dri, dri + d, dzi);
    for (size_t a = 0; a < T; ++a) {
      const float gz = z_pair(a);
      const float* pa = p + a * d;
      for (size_t k = 0; k < d; ++k) dzi[k] += gz * pa[k];
    }
  }
}

}  // namespace

ACTORREC_VECTOR_CLONES
void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                         size_t width, float* dz, float* dpooled, float* G) {
  if (d % kLanes == 0) {
    InteractionBackwardIn<Lanes>(dr, z, pooled, n, T, d, width, dz, dpooled, G);
  } else {
    InteractionBackwardIn<float>(dr, z, pooled, n, T, d, width, dz, dpooled, G);
  }
}

size_t InteractionColumnsFloats(size_t T, size_t d, bool with_z) {
  const size_t vectors = T + (with_z ? 1 : 0);
  return d * ((vectors + kLanes - 1) / kLanes * kLanes);
}

void DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d, size_t w,
               float* x) {
  const size_t x_width = dd + T * d;
  for (size_t i = 0; i < n; ++i) {
    float* xi = x + i * x_width;
    std::copy(dense + i * dd, dense + (i + 1) * dd, xi);
    for (size_t t = 0; t < T; ++t) {
      const float* e = pooled + (i * (T + C) + t) * w;
      std::copy(e, e + d, xi + dd + t * d);
    }
  }
}

void WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                    const float* bias_at, bool fm, float* sums, float* logits) {
  const size_t w = d + 1;
  const float bias = bias_at[0];
  for (size_t i = 0; i < n; ++i) {
    const float* pi = pooled + i * (T + C) * w;
    float first = 0.0f;
    for (size_t t = 0; t < T + C; ++t) first += pi[t * w + d];
    float logit = deep[i] + first + bias;
    if (fm) {
      float* s = sums + i * d;
      std::fill(s, s + d, 0.0f);
      float squares = 0.0f;
      for (size_t t = 0; t < T; ++t) {
        const float* e = pi + t * w;
        for (size_t k = 0; k < d; ++k) s[k] += e[k];
        squares += Dot(e, e, d);
      }
      logit += 0.5f * (Dot(s, s, d) - squares);
    }
    logits[i] = logit;
  }
}

void WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit, size_t n,
                        size_t dd, size_t T, size_t C, size_t d, float* pooled_grad) {
  const size_t w = d + 1, x_width = dd + T * d;
  for (size_t i = 0; i < n; ++i) {
    const float g = dlogit[i];
    const float* pi = pooled + i * (T + C) * w;
    float* gi = pooled_grad + i * (T + C) * w;
    const float* dxi = dx + i * x_width + dd;
    for (size_t t = 0; t < T; ++t) {
      std::copy(dxi + t * d, dxi + (t + 1) * d, gi + t * w);
      gi[t * w + d] = g;  // ∂logit/∂w_t = 1
    }
    for (size_t t = T; t < T + C; ++t) {  // wide-only: the weight alone
      std::fill(gi + t * w, gi + t * w + d, 0.0f);
      gi[t * w + d] = g;
    }
    if (sums != nullptr) {
      // ∂/∂e_tk of ½[(Σ_t e_tk)² − Σ_t e_tk²] = s_k − e_tk.
      const float* s = sums + i * d;
      for (size_t t = 0; t < T; ++t) {
        const float* e = pi + t * w;
        float* ge = gi + t * w;
        for (size_t k = 0; k < d; ++k) ge[k] += g * (s[k] - e[k]);
      }
    }
  }
}

// The loops that were models/dcn.cpp's, moved unchanged.
void CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0, float* s,
                  float* next) {
  for (size_t i = 0; i < n; ++i) {
    const float* xi = x + i * d0;
    const float* x0i = x0 + i * d0;
    float* o = next + i * d0;
    const float si = Dot(xi, w, d0);
    s[i] = si;
    for (size_t k = 0; k < d0; ++k) o[k] = x0i[k] * si + b[k] + xi[k];
  }
}

void DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0, size_t hw,
               float* logits) {
  const float bias = fb[0];
  for (size_t i = 0; i < n; ++i) {
    float z = Dot(fw, xl + i * d0, d0);
    if (hw > 0) z += Dot(fw + d0, h + i * hw, hw);
    logits[i] = z + bias;
  }
}

void DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n, size_t d0,
                      size_t hw, float* gfw, float* gfb, float* g, float* dh) {
  std::fill(gfw, gfw + d0 + hw, 0.0f);
  float bias = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float gl = dlogit[i];
    bias += gl;
    const float* xi = xl + i * d0;
    float* gi = g + i * d0;
    for (size_t k = 0; k < d0; ++k) {
      gfw[k] += gl * xi[k];
      gi[k] = gl * fw[k];
    }
    for (size_t k = 0; k < hw; ++k) {
      gfw[d0 + k] += gl * h[i * hw + k];
      dh[i * hw + k] = gl * fw[d0 + k];
    }
  }
  gfb[0] = bias;
}

void CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0, float* g,
                   float* dx0, float* gw, float* gb) {
  std::fill(gw, gw + d0, 0.0f);
  std::fill(gb, gb + d0, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    float* gi = g + i * d0;  // ∂/∂x_{l+1} on entry, ∂/∂x_l on exit
    const float* x0i = x0 + i * d0;
    const float* xi = x + i * d0;
    const float gs = Dot(gi, x0i, d0);  // ∂/∂(x_l·w_l)
    const float si = s[i];
    float* dx0i = dx0 + i * d0;
    for (size_t k = 0; k < d0; ++k) {
      gw[k] += gs * xi[k];
      gb[k] += gi[k];
      dx0i[k] += gi[k] * si;
      gi[k] += gs * w[k];
    }
  }
}

void DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad) {
  const size_t td = d0 - dd;
  for (size_t i = 0; i < n; ++i) {
    const float* gi = g + i * d0 + dd;
    const float* dx0i = dx0 + i * d0 + dd;
    float* out = pooled_grad + i * td;
    for (size_t k = 0; k < td; ++k) out[k] = gi[k] + dx0i[k];
  }
}

}  // namespace actorrec::gpu::cpu
