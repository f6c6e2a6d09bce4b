// The four recommendation models, as one interface the trainer drives:
// DLRM, Wide&Deep, DeepFM and Deep&Cross (DCN v1), configured from [model].
//
// A model sees one trainer's slice: the dense features, the labels, and the
// pooled embeddings of every table (samples × tables × embedding_width(),
// sample-major), gathered by the trainer from its cache. It returns the
// slice's loss and writes the gradients of its dense parameters and of the
// pooled embeddings; the trainer turns the latter into row gradients.
//
// Dense parameters live in one contiguous buffer (params(), with grads() of
// the same layout), so that the dense all-reduce and the checkpoint see one
// array; tensors() names the pieces ("bottom_mlp.0.weight", shaped
// [out, in] as in PyTorch's nn.Linear).
//
// Every loop runs in a fixed order: the result depends only on the inputs.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "configs/config.hpp"
#include "gpu/backend.hpp"

namespace actorrec::models {

struct ModelSpec {
  config::ModelKind kind = config::ModelKind::kDlrm;
  uint32_t dense_features = 0;
  uint32_t tables = 0;
  uint32_t embedding_dim = 16;
  std::vector<int> bottom_mlp, top_mlp, deep_mlp;
  int cross_layers = 0;
  gpu::Pooling pooling = gpu::Pooling::kSum;
};

ModelSpec SpecOf(const config::ModelConfig& model, uint32_t dense_features, uint32_t tables);

// GEMM FLOPs per sample of one forward and backward pass (2 per multiply-add;
// forward, input gradient and weight gradient of every linear layer): the
// numerator of the training roofline.
double MlpFlopsPerSample(const ModelSpec& spec);

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  size_t offset = 0;  // into params() / grads()
  size_t size = 0;
};

struct SliceView {
  size_t samples = 0;
  const float* dense = nullptr;   // samples × dense_features, row-major
  const float* labels = nullptr;  // 0 or 1
};

class Model {
 public:
  // InvalidArgument naming the config key when the shape is impossible.
  static Result<std::unique_ptr<Model>> Create(const ModelSpec& spec, gpu::Backend* backend);
  virtual ~Model() = default;

  // Floats of a pooled embedding and of a row's weights: embedding_dim, plus
  // one first-order weight (the last float) for Wide&Deep and DeepFM.
  uint32_t embedding_width() const { return width_; }
  std::span<float> params() { return params_; }
  std::span<float> grads() { return grads_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const ModelSpec& spec() const { return spec_; }

  // Weights from (seed, tensor, element) alone: normal with the DLRM
  // reference's scales (weights sqrt(2 / (in + out)), biases sqrt(1 / out)).
  void Initialize(uint64_t seed);

  // Overwrites grads() and pooled_grad (shape of pooled) with the gradients
  // of grad_scale × Σ_i BCEWithLogits(logit_i, label_i); returns the
  // unscaled Σ_i loss_i.
  virtual double ForwardBackward(const SliceView& in, const float* pooled, float* pooled_grad, float grad_scale) = 0;
  // Logits (not probabilities) of the slice's samples.
  virtual void Predict(const SliceView& in, const float* pooled, float* logits) = 0;

 protected:
  Model(ModelSpec spec, gpu::Backend* backend, uint32_t width) : spec_(std::move(spec)), backend_(backend), width_(width) {}
  // Declares a tensor; returns its offset. Call only in the constructor.
  size_t AddTensor(std::string name, std::vector<int64_t> shape, bool is_bias);
  void FinishTensors();

  ModelSpec spec_;
  gpu::Backend* backend_;
  uint32_t width_;
  std::vector<float> params_, grads_;
  std::vector<TensorInfo> tensors_;
  std::vector<bool> is_bias_;
};

}  // namespace actorrec::models
