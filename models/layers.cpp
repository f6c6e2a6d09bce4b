#include "models/layers.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::models {

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

void Mlp::Forward(gpu::Backend& be, const float* params, const float* x, size_t n) {
  acts_.resize(layers_.size());
  input_ = x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Linear& layer = layers_[l];
    const float* in = l == 0 ? x : acts_[l - 1].data();
    Grow(&acts_[l], n * layer.out);
    float* out = acts_[l].data();
    be.Gemm(false, true, static_cast<int>(n), layer.out, layer.in, 1.0f, in, layer.in, params + layer.w, layer.in,
            0.0f, out, layer.out);
    AddBias(out, params + layer.b, n, layer.out, l + 1 < layers_.size() || relu_last_);
  }
}

void Mlp::Backward(gpu::Backend& be, const float* params, float* grads, const float* dy, size_t n, float* dx) {
  const float* g_out = dy;
  for (size_t l = layers_.size(); l-- > 0;) {
    const Linear& layer = layers_[l];
    const bool relu = l + 1 < layers_.size() || relu_last_;
    std::vector<float>& g = grad_[l % 2];
    Grow(&g, n * layer.out);
    const size_t count = n * layer.out;
    if (relu) {
      ReluGrad(g_out, acts_[l].data(), g.data(), count);  // g_out is dy or the other grad_ buffer
    } else if (g.data() != g_out) {
      std::copy(g_out, g_out + count, g.begin());
    }
    const float* in = l == 0 ? input_ : acts_[l - 1].data();
    be.Gemm(true, false, layer.out, layer.in, static_cast<int>(n), 1.0f, g.data(), layer.out, in, layer.in, 0.0f,
            grads + layer.w, layer.in);
    BiasGrad(g.data(), n, layer.out, grads + layer.b);
    if (l == 0 && dx == nullptr) break;
    float* target = dx;
    if (l > 0) {
      std::vector<float>& next = grad_[(l + 1) % 2];
      Grow(&next, n * layer.in);
      target = next.data();
    }
    be.Gemm(false, false, static_cast<int>(n), layer.in, layer.out, 1.0f, g.data(), layer.out, params + layer.w,
            layer.in, 0.0f, target, layer.in);
    g_out = target;
  }
}

double Mlp::FlopsPerSample(bool input_grad) const {
  double flops = 0.0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const double gemms = l == 0 && !input_grad ? 2.0 : 3.0;  // forward, weight gradient, input gradient
    flops += gemms * 2.0 * layers_[l].in * layers_[l].out;
  }
  return flops;
}

}  // namespace actorrec::models
