#include "models/layers.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::models {

void Mlp::Forward(gpu::Backend& be, const float* params, const float* x, size_t n) {
  acts_.resize(layers_.size());
  input_ = x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Linear& layer = layers_[l];
    const float* in = l == 0 ? x : acts_[l - 1].data();
    float* out = acts_[l].Grow(be, n * layer.out);
    be.ResidentGemm(false, true, static_cast<int>(n), layer.out, layer.in, 1.0f, in, layer.in, params + layer.w,
                    layer.in, 0.0f, out, layer.out);
    be.BiasAdd(out, params + layer.b, n, layer.out, l + 1 < layers_.size() || relu_last_);
  }
}

void Mlp::Backward(gpu::Backend& be, const float* params, float* grads, const float* dy, size_t n, float* dx) {
  const float* g_out = dy;
  for (size_t l = layers_.size(); l-- > 0;) {
    const Linear& layer = layers_[l];
    const bool relu = l + 1 < layers_.size() || relu_last_;
    const size_t count = n * layer.out;
    // Without a ReLU the layer's gradient is g_out itself (only read below).
    const float* g = g_out;
    if (relu) {
      float* masked = grad_[l % 2].Grow(be, count);
      be.ReluGrad(g_out, acts_[l].data(), masked, count);  // g_out is dy or the other grad_ buffer
      g = masked;
    }
    const float* in = l == 0 ? input_ : acts_[l - 1].data();
    be.ResidentGemm(true, false, layer.out, layer.in, static_cast<int>(n), 1.0f, g, layer.out, in, layer.in, 0.0f,
                    grads + layer.w, layer.in);
    be.BiasGrad(g, n, layer.out, grads + layer.b);
    if (l == 0 && dx == nullptr) break;
    float* target = l > 0 ? grad_[(l + 1) % 2].Grow(be, n * layer.in) : dx;
    be.ResidentGemm(false, false, static_cast<int>(n), layer.in, layer.out, 1.0f, g, layer.out, params + layer.w,
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
