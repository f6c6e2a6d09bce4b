// Deep & Cross Network v1 (Wang et al. 2017): cross layers
// x_{l+1} = x0·(x_l·w_l) + b_l + x_l beside a ReLU tower over x0, and one
// linear layer over [x_L, h] for the logit. The cross layers are rank-one
// per sample, so they run as Dot() and elementwise loops, not GEMMs.
#include <algorithm>
#include <memory>

#include "models/layers.hpp"
#include "models/model_kinds.hpp"

namespace actorrec::models {
namespace {

class Dcn final : public Model {
 public:
  Dcn(const ModelSpec& spec, gpu::Backend* be) : Model(spec, be, spec.embedding_dim) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    d0_ = spec.dense_features + spec.tables * spec.embedding_dim;
    const auto d0 = static_cast<int64_t>(d0_);
    for (int l = 0; l < spec.cross_layers; ++l) {
      const std::string prefix = std::string("cross.").append(std::to_string(l));
      cross_w_.push_back(AddTensor(std::string(prefix).append(".weight"), {d0}, false));
      cross_b_.push_back(AddTensor(std::string(prefix).append(".bias"), {d0}, true));
    }
    // deep_mlp's last width is the logit's (1): the final layer replaces it.
    const std::vector<int> hidden(spec.deep_mlp.begin(), spec.deep_mlp.end() - 1);
    if (!hidden.empty()) deep_ = Mlp(DeclareMlp(add, "deep_mlp", static_cast<int>(d0_), hidden), true);
    h_ = hidden.empty() ? 0 : static_cast<size_t>(hidden.back());
    final_w_ = AddTensor("final.weight", {1, d0 + static_cast<int64_t>(h_)}, false);
    final_b_ = AddTensor("final.bias", {1}, true);
    FinishTensors();
  }

  double Backward(const SliceView& in, const float* /*pooled*/, float* pooled_grad, float scale) override {
    const size_t n = in.samples, L = cross_w_.size();
    Grow(&dlogit_, n);
    const double loss = BceWithLogits(logits_.data(), in.labels, n, scale, dlogit_.data());
    // The final layer: g_ = ∂/∂x_L, dh_ = ∂/∂h.
    const float* fw = params_.data() + final_w_;
    float* gfw = grads_.data() + final_w_;
    std::fill(gfw, gfw + d0_ + h_, 0.0f);
    float gfb = 0.0f;
    Grow(&g_, n * d0_);
    Grow(&dh_, n * h_);
    const float* xl = xs_.data() + L * n * d0_;
    const float* h = h_ ? deep_.output() : nullptr;
    for (size_t i = 0; i < n; ++i) {
      const float g = dlogit_[i];
      gfb += g;
      const float* xi = xl + i * d0_;
      float* gi = g_.data() + i * d0_;
      for (size_t k = 0; k < d0_; ++k) {
        gfw[k] += g * xi[k];
        gi[k] = g * fw[k];
      }
      for (size_t k = 0; k < h_; ++k) {
        gfw[d0_ + k] += g * h[i * h_ + k];
        dh_[i * h_ + k] = g * fw[d0_ + k];
      }
    }
    grads_[final_b_] = gfb;
    // dx0_ collects every path into x0 except the residual chain in g_.
    Grow(&dx0_, n * d0_);
    if (h_) {
      deep_.Backward(*backend_, params_.data(), grads_.data(), dh_.data(), n, dx0_.data());
    } else {
      std::fill(dx0_.begin(), dx0_.begin() + static_cast<std::ptrdiff_t>(n * d0_), 0.0f);
    }
    const float* x0 = xs_.data();
    for (size_t l = L; l-- > 0;) {
      const float* x = xs_.data() + l * n * d0_;
      const float* w = params_.data() + cross_w_[l];
      float* gw = grads_.data() + cross_w_[l];
      float* gb = grads_.data() + cross_b_[l];
      std::fill(gw, gw + d0_, 0.0f);
      std::fill(gb, gb + d0_, 0.0f);
      for (size_t i = 0; i < n; ++i) {
        float* g = g_.data() + i * d0_;  // ∂/∂x_{l+1} on entry, ∂/∂x_l on exit
        const float* x0i = x0 + i * d0_;
        const float* xi = x + i * d0_;
        const float gs = Dot(g, x0i, d0_);  // ∂/∂(x_l·w_l)
        const float s = s_[l * n + i];
        float* dx0 = dx0_.data() + i * d0_;
        for (size_t k = 0; k < d0_; ++k) {
          gw[k] += gs * xi[k];
          gb[k] += g[k];
          dx0[k] += g[k] * s;
          g[k] += gs * w[k];
        }
      }
    }
    // x_0 is x0: the residual chain's gradient joins the others.
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    for (size_t i = 0; i < n; ++i) {
      const float* g = g_.data() + i * d0_ + dd;
      const float* dx0 = dx0_.data() + i * d0_ + dd;
      float* out = pooled_grad + i * T * d;
      for (size_t k = 0; k < T * d; ++k) out[k] = g[k] + dx0[k];
    }
    return loss;
  }

  const float* logits() const override { return logits_.data(); }

  void Forward(const SliceView& in, const float* pooled) override {
    const size_t n = in.samples, L = cross_w_.size();
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    Grow(&xs_, (L + 1) * n * d0_);
    Grow(&s_, L * n);
    float* x0 = xs_.data();
    for (size_t i = 0; i < n; ++i) {
      std::copy(in.dense + i * dd, in.dense + (i + 1) * dd, x0 + i * d0_);
      std::copy(pooled + i * T * d, pooled + (i + 1) * T * d, x0 + i * d0_ + dd);
    }
    for (size_t l = 0; l < L; ++l) {
      const float* x = xs_.data() + l * n * d0_;
      float* next = xs_.data() + (l + 1) * n * d0_;
      const float* w = params_.data() + cross_w_[l];
      const float* b = params_.data() + cross_b_[l];
      for (size_t i = 0; i < n; ++i) {
        const float* xi = x + i * d0_;
        const float* x0i = x0 + i * d0_;
        float* o = next + i * d0_;
        const float s = Dot(xi, w, d0_);
        s_[l * n + i] = s;
        for (size_t k = 0; k < d0_; ++k) o[k] = x0i[k] * s + b[k] + xi[k];
      }
    }
    if (h_) deep_.Forward(*backend_, params_.data(), x0, n);
    Grow(&logits_, n);
    const float* xl = xs_.data() + L * n * d0_;
    const float* fw = params_.data() + final_w_;
    const float* h = h_ ? deep_.output() : nullptr;
    const float fb = params_[final_b_];
    for (size_t i = 0; i < n; ++i) {
      float z = Dot(fw, xl + i * d0_, d0_);
      if (h_) z += Dot(fw + d0_, h + i * h_, h_);
      logits_[i] = z + fb;
    }
  }

 private:
  size_t d0_ = 0, h_ = 0;
  std::vector<size_t> cross_w_, cross_b_;
  size_t final_w_ = 0, final_b_ = 0;
  Mlp deep_;
  std::vector<float> xs_, s_, logits_, dlogit_, g_, dh_, dx0_;
};

}  // namespace

std::unique_ptr<Model> MakeDcn(const ModelSpec& spec, gpu::Backend* backend) {
  return std::make_unique<Dcn>(spec, backend);
}

}  // namespace actorrec::models
