// Wide&Deep (Cheng et al. 2016) and DeepFM (Guo et al. 2017): one class,
// since DeepFM is Wide&Deep's first-order term and deep tower plus the FM
// second-order term. Each pooled vector has width D + 1: D embedding floats
// for the deep tower (and FM), then the row's first-order weight.
#include <algorithm>
#include <memory>

#include "models/layers.hpp"
#include "models/model_kinds.hpp"

namespace actorrec::models {
namespace {

class WideDeep final : public Model {
 public:
  WideDeep(const ModelSpec& spec, gpu::Backend* be, bool fm) : Model(spec, be, spec.embedding_dim + 1), fm_(fm) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    x_width_ = spec.dense_features + spec.tables * spec.embedding_dim;
    deep_ = Mlp(DeclareMlp(add, "deep_mlp", static_cast<int>(x_width_), spec.deep_mlp), false);
    bias_ = AddTensor(fm ? "fm.bias" : "wide.bias", {1}, true);
    FinishTensors();
  }

  double Backward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    const size_t n = in.samples;
    Grow(&dlogit_, n);
    const double loss = BceWithLogits(logits_.data(), in.labels, n, scale, dlogit_.data());
    Grow(&dx_, n * x_width_);
    deep_.Backward(*backend_, params_.data(), grads_.data(), dlogit_.data(), n, dx_.data());
    const size_t d = spec_.embedding_dim, T = spec_.tables, w = width_, dd = spec_.dense_features;
    float db = 0.0f;
    for (size_t i = 0; i < n; ++i) {
      const float g = dlogit_[i];
      db += g;
      const float* pi = pooled + i * T * w;
      float* gi = pooled_grad + i * T * w;
      const float* dxi = dx_.data() + i * x_width_ + dd;
      for (size_t t = 0; t < T; ++t) {
        std::copy(dxi + t * d, dxi + (t + 1) * d, gi + t * w);
        gi[t * w + d] = g;  // ∂logit/∂w_t = 1
      }
      if (fm_) {
        // ∂/∂e_tk of ½[(Σ_t e_tk)² − Σ_t e_tk²] = s_k − e_tk.
        const float* s = sums_.data() + i * d;
        for (size_t t = 0; t < T; ++t) {
          const float* e = pi + t * w;
          float* ge = gi + t * w;
          for (size_t k = 0; k < d; ++k) ge[k] += g * (s[k] - e[k]);
        }
      }
    }
    grads_[bias_] = db;
    return loss;
  }

  const float* logits() const override { return logits_.data(); }

  void Forward(const SliceView& in, const float* pooled) override {
    const size_t n = in.samples, d = spec_.embedding_dim, T = spec_.tables, w = width_, dd = spec_.dense_features;
    Grow(&x_, n * x_width_);
    for (size_t i = 0; i < n; ++i) {
      float* xi = x_.data() + i * x_width_;
      std::copy(in.dense + i * dd, in.dense + (i + 1) * dd, xi);
      for (size_t t = 0; t < T; ++t) {
        const float* e = pooled + (i * T + t) * w;
        std::copy(e, e + d, xi + dd + t * d);
      }
    }
    deep_.Forward(*backend_, params_.data(), x_.data(), n);
    Grow(&logits_, n);
    if (fm_) Grow(&sums_, n * d);
    const float* deep = deep_.output();
    const float bias = params_[bias_];
    for (size_t i = 0; i < n; ++i) {
      const float* pi = pooled + i * T * w;
      float first = 0.0f;
      for (size_t t = 0; t < T; ++t) first += pi[t * w + d];
      float logit = deep[i] + first + bias;
      if (fm_) {
        float* s = sums_.data() + i * d;
        std::fill(s, s + d, 0.0f);
        float squares = 0.0f;
        for (size_t t = 0; t < T; ++t) {
          const float* e = pi + t * w;
          for (size_t k = 0; k < d; ++k) s[k] += e[k];
          squares += Dot(e, e, d);
        }
        logit += 0.5f * (Dot(s, s, d) - squares);
      }
      logits_[i] = logit;
    }
  }

 private:
  bool fm_;
  size_t x_width_ = 0;
  size_t bias_ = 0;
  Mlp deep_;
  std::vector<float> x_, dx_, logits_, dlogit_, sums_;
};

}  // namespace

std::unique_ptr<Model> MakeWideDeep(const ModelSpec& spec, gpu::Backend* backend, bool fm) {
  return std::make_unique<WideDeep>(spec, backend, fm);
}

}  // namespace actorrec::models
