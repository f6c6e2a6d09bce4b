// DLRM (Naumov et al. 2019): bottom MLP, pairwise dot interaction, top MLP;
// without dense features, no bottom MLP and the interaction over the
// embeddings alone.
//
// Every op of its step goes through gpu::Backend (the interaction's loops
// are gpu/cpu_ops.cpp on the CPU, kernels on CUDA), on buffers of the
// backend's memory: with a device backend the step runs device-resident
// (docs/gpu.md), and only the batch's inputs, the parameters' working copy,
// the logits and the gradients cross the bus, once per batch.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "models/layers.hpp"
#include "models/model_kinds.hpp"

namespace actorrec::models {
namespace {

// Every buffer is in the backend's memory. With a host backend (the CPU's)
// the inputs and parameters are used where they are; with a device backend
// the step's inputs (dense features, labels, pooled embeddings) and the
// parameters' working copy go up once per batch, and the logits, the
// parameter gradients and the pooled gradients come down once
// (gpu::Buffer::Resident; docs/gpu.md).
class Dlrm final : public Model {
 public:
  Dlrm(const ModelSpec& spec, gpu::Backend* be) : Model(spec, be, spec.embedding_dim) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    inter_ = DlrmInteractionWidth(spec);
    bottom_ = Mlp(DeclareMlp(add, "bottom_mlp", static_cast<int>(spec.dense_features), spec.bottom_mlp), true);
    top_ = Mlp(DeclareMlp(add, "top_mlp", inter_, spec.top_mlp), false);
    FinishTensors();
  }

  bool DedupsDense() const override { return !bottom_.empty(); }

  double Backward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, d = spec_.embedding_dim, T = spec_.tables;
    (void)pooled;  // Forward's pooled_on_ holds the same floats
    float* dlogit = nullptr;
    const double loss = LossGradient(in, top_.output(), scale, &dlogit);
    float* grads = GradsTarget();
    float* dr = dr_.Grow(be, n * inter_);
    top_.Backward(be, params_on_, grads, dlogit, n, dr);
    float* dz = bottom_.empty() ? nullptr : dz_.Grow(be, n * d);
    float* dpooled = PooledGradTarget(in, pooled_grad, n * T * d);
    be.InteractionBackward(dr, z(), pooled_on_, n, T, d, inter_, dz, dpooled);
    if (!bottom_.empty() && in.dense_of != nullptr) {
      // Per distinct dense row: its samples' dz in ascending sample order,
      // then the bottom MLP's backward over the distinct rows alone.
      float* dz_rows = dz_rows_.Grow(be, in.dense_rows * d);
      be.SumRowsByIndex(dz, d, d, in.dense_of, n, in.dense_rows, dz_rows, d);
      bottom_.Backward(be, params_on_, grads, dz_rows, in.dense_rows, nullptr);
    } else if (!bottom_.empty()) {
      bottom_.Backward(be, params_on_, grads, dz, n, nullptr);
    }
    FinishBackward(in, grads, dpooled, pooled_grad, n * T * d);
    return loss;
  }

  void Forward(const SliceView& in, const float* pooled) override {
    gpu::Backend& be = *backend_;
    const size_t n = in.samples, d = spec_.embedding_dim, T = spec_.tables;
    params_on_ = ResidentParams();
    pooled_on_ = PooledOn(in, up_pooled_, pooled, n * T * d);
    z_ = nullptr;
    if (!bottom_.empty() && in.dense_of != nullptr) {
      // The bottom MLP once per distinct dense row, expanded to the samples.
      const size_t rows = in.dense_rows;
      bottom_.Forward(be, params_on_, DenseOn(in, up_dense_, rows * spec_.dense_features), rows);
      float* z = z_expanded_.Grow(be, n * d);
      be.GatherRows(bottom_.output(), d, d, in.dense_of, n, z, d);
      z_ = z;
    } else if (!bottom_.empty()) {
      bottom_.Forward(be, params_on_, DenseOn(in, up_dense_, n * spec_.dense_features), n);
      z_ = bottom_.output();
    }
    float* r = r_.Grow(be, n * inter_);
    be.InteractionForward(z(), pooled_on_, n, T, d, inter_, r);
    top_.Forward(be, params_on_, r, n);
    KeepLogits(top_.output(), n);
  }

 private:
  // The samples' bottom MLP outputs (n × d: the bottom MLP's own, or their
  // expansion from the distinct dense rows), or null without dense features
  // (no bottom MLP).
  const float* z() const { return z_; }

  int inter_ = 0;
  Mlp bottom_, top_;
  // The last Forward's parameters and pooled embeddings in the backend's
  // memory (Backward uses them).
  const float* params_on_ = nullptr;
  const float* pooled_on_ = nullptr;
  const float* z_ = nullptr;
  gpu::Buffer r_, dr_, dz_;
  // With deduplicated dense rows: z expanded to the samples, and dz summed
  // per distinct row.
  gpu::Buffer z_expanded_, dz_rows_;
  // Device only: the uploaded inputs.
  gpu::Buffer up_pooled_, up_dense_;
};

}  // namespace

int DlrmInteractionWidth(const ModelSpec& spec) {
  const bool dense = spec.dense_features > 0;
  const int t = static_cast<int>(spec.tables) + (dense ? 1 : 0);
  return (dense ? static_cast<int>(spec.embedding_dim) : 0) + t * (t - 1) / 2;
}

std::unique_ptr<Model> MakeDlrm(const ModelSpec& spec, gpu::Backend* backend) {
  return std::make_unique<Dlrm>(spec, backend);
}

}  // namespace actorrec::models
