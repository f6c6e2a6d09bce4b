// Deep & Cross Network v1 (Wang et al. 2017): cross layers
// x_{l+1} = x0·(x_l·w_l) + b_l + x_l beside a ReLU tower over x0, and one
// linear layer over [x_L, h] for the logit. The cross layers are rank-one
// per sample, so they run as Dot() and elementwise loops (gpu::Backend's
// DCN ops: gpu/cpu_ops.cpp on the CPU, kernels on CUDA), not GEMMs.
//
// Its step runs through gpu::Backend's ops on buffers of the backend's
// memory, as DLRM's (models/dlrm.cpp): device-resident on CUDA.
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

  double Backward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, L = cross_w_.size();
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    (void)pooled;  // Forward's x0 holds the same floats
    float* dlogit = nullptr;
    const double loss = LossGradient(in, logits_.data(), scale, &dlogit);
    float* grads = GradsTarget();
    // The final layer: g = ∂/∂x_L, dh = ∂/∂h.
    const float* xs = xs_.data();
    float* g = g_.Grow(be, n * d0_);
    float* dh = h_ ? dh_.Grow(be, n * h_) : nullptr;
    be.DcnFinalBackward(dlogit, params_on_ + final_w_, xs + L * n * d0_, h(), n, d0_, h_, grads + final_w_,
                        grads + final_b_, g, dh);
    // dx0 collects every path into x0 except the residual chain in g.
    float* dx0 = dx0_.Grow(be, n * d0_);
    if (h_) {
      deep_.Backward(be, params_on_, grads, dh, n, dx0);
    } else {
      be.SetZero(dx0, n * d0_);
    }
    for (size_t l = L; l-- > 0;) {
      be.CrossBackward(xs, xs + l * n * d0_, params_on_ + cross_w_[l], s_.data() + l * n, n, d0_, g, dx0,
                       grads + cross_w_[l], grads + cross_b_[l]);
    }
    // x_0 is x0: the residual chain's gradient joins the others.
    float* dpooled = PooledGradTarget(in, pooled_grad, n * T * d);
    be.DcnPooledGrad(g, dx0, n, d0_, dd, dpooled);
    FinishBackward(in, grads, dpooled, pooled_grad, n * T * d);
    return loss;
  }

  void Forward(const SliceView& in, const float* pooled) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, L = cross_w_.size();
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    params_on_ = ResidentParams();
    float* xs = xs_.Grow(be, (L + 1) * n * d0_);
    float* s = s_.Grow(be, L * n);
    be.DeepInput(DenseOn(in, up_dense_, n * dd), PooledOn(in, up_pooled_, pooled, n * T * d), n, dd, T, 0,
                 d, d, xs);
    for (size_t l = 0; l < L; ++l) {
      be.CrossForward(xs, xs + l * n * d0_, params_on_ + cross_w_[l], params_on_ + cross_b_[l], n, d0_, s + l * n,
                      xs + (l + 1) * n * d0_);
    }
    if (h_) deep_.Forward(be, params_on_, xs, n);
    float* logits = logits_.Grow(be, n);
    be.DcnLogits(params_on_ + final_w_, params_on_ + final_b_, xs + L * n * d0_, h(), n, d0_, h_, logits);
    KeepLogits(logits, n);
  }

 private:
  size_t d0_ = 0, h_ = 0;
  std::vector<size_t> cross_w_, cross_b_;
  size_t final_w_ = 0, final_b_ = 0;
  Mlp deep_;
  // The deep tower's output, or null without one.
  const float* h() const { return h_ ? deep_.output() : nullptr; }
  // The last Forward's parameters in the backend's memory (Backward uses
  // them), its x_0 … x_L ((L + 1) × n × d0, x0 first) and s (L × n).
  const float* params_on_ = nullptr;
  gpu::Buffer xs_, s_, logits_, g_, dh_, dx0_;
  // Device only: the uploaded inputs.
  gpu::Buffer up_pooled_, up_dense_;
};

}  // namespace

std::unique_ptr<Model> MakeDcn(const ModelSpec& spec, gpu::Backend* backend) {
  return std::make_unique<Dcn>(spec, backend);
}

}  // namespace actorrec::models
