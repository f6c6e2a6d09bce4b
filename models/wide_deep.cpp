// Wide&Deep (Cheng et al. 2016) and DeepFM (Guo et al. 2017): one class,
// since DeepFM is Wide&Deep's first-order term and deep tower plus the FM
// second-order term. Each pooled vector has width D + 1: D embedding floats
// for the deep tower (and FM), then the row's first-order weight. Wide&Deep's
// crosses (spec.wide_tables) are pooled after the deep tables: their weight
// joins the first-order sum, their D floats nothing.
//
// Its step runs through gpu::Backend's ops on buffers of the backend's
// memory, as DLRM's (models/dlrm.cpp): device-resident on CUDA.
#include <algorithm>
#include <memory>
#include <optional>

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
    // Declared last, so that the other tensors keep their initial values.
    if (spec.wide_dense && spec.dense_features > 0) {
      wide_dense_ = AddTensor("wide.dense", {1, static_cast<int64_t>(spec.dense_features)}, false);
    }
    FinishTensors();
  }

  double Backward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, d = spec_.embedding_dim, T = spec_.tables, C = spec_.wide_tables;
    const size_t dd = spec_.dense_features;
    (void)pooled;  // Forward's pooled_on_ holds the same floats
    float* dlogit = nullptr;
    const double loss = LossGradient(in, logits_.data(), scale, &dlogit);
    float* grads = GradsTarget();
    float* dx = dx_.Grow(be, n * x_width_);
    deep_.Backward(be, params_on_, grads, dlogit, n, dx);
    float* dpooled = PooledGradTarget(in, pooled_grad, n * (T + C) * width_);
    be.WideDeepPooledGrad(dx, pooled_on_, fm_ ? sums_.data() : nullptr, dlogit, n, dd, T, C, d, dpooled);
    be.BiasGrad(dlogit, n, 1, grads + bias_);  // Σ_i dlogit_i in sample order from +0
    if (wide_dense_) {  // ∂/∂v_j = Σ_i dlogit_i · x_ij
      be.ResidentGemm(true, false, 1, static_cast<int>(dd), static_cast<int>(n), 1.0f, dlogit, 1, dense_on_,
                      static_cast<int>(dd), 0.0f, grads + *wide_dense_, static_cast<int>(dd));
    }
    FinishBackward(in, grads, dpooled, pooled_grad, n * (T + C) * width_);
    return loss;
  }

  void Forward(const SliceView& in, const float* pooled) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, d = spec_.embedding_dim, T = spec_.tables, C = spec_.wide_tables;
    const size_t dd = spec_.dense_features;
    params_on_ = ResidentParams();
    pooled_on_ = PooledOn(in, up_pooled_, pooled, n * (T + C) * width_);
    float* x = x_.Grow(be, n * x_width_);
    dense_on_ = DenseOn(in, up_dense_, n * dd);
    be.DeepInput(dense_on_, pooled_on_, n, dd, T, C, d, width_, x);
    deep_.Forward(be, params_on_, x, n);
    float* logits = logits_.Grow(be, n);
    float* sums = fm_ ? sums_.Grow(be, n * d) : nullptr;
    be.WideDeepLogits(deep_.output(), pooled_on_, n, T, C, d, params_on_ + bias_, fm_, sums, logits);
    if (wide_dense_ && n > 0) {  // logits += dense · vᵀ
      be.ResidentGemm(false, true, static_cast<int>(n), 1, static_cast<int>(dd), 1.0f, dense_on_,
                      static_cast<int>(dd), params_on_ + *wide_dense_, static_cast<int>(dd), 1.0f, logits, 1);
    }
    KeepLogits(logits, n);
  }

 private:
  bool fm_;
  size_t x_width_ = 0;
  size_t bias_ = 0;
  std::optional<size_t> wide_dense_;  // wide.dense's offset, with spec.wide_dense
  Mlp deep_;
  // The last Forward's parameters and pooled embeddings in the backend's
  // memory (Backward uses them).
  const float* params_on_ = nullptr;
  const float* pooled_on_ = nullptr;
  const float* dense_on_ = nullptr;
  gpu::Buffer x_, dx_, logits_, sums_;
  // Device only: the uploaded inputs.
  gpu::Buffer up_pooled_, up_dense_;
};

}  // namespace

std::unique_ptr<Model> MakeWideDeep(const ModelSpec& spec, gpu::Backend* backend, bool fm) {
  return std::make_unique<WideDeep>(spec, backend, fm);
}

}  // namespace actorrec::models
