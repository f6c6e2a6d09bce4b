// The four recommendation models, as one interface the trainer drives:
// DLRM, Wide&Deep, DeepFM and Deep&Cross (DCN v1), configured from [model].
//
// A model sees one trainer's slice: the dense features, the labels, and the
// pooled embeddings of every table (samples × spec().pooled_tables() ×
// embedding_width(), sample-major), gathered by the trainer from its cache. It returns the
// slice's loss and writes the gradients of its dense parameters and of the
// pooled embeddings; the trainer turns the latter into row gradients.
//
// Dense parameters live in one contiguous buffer (params(), with grads() of
// the same layout), so that the dense all-reduce and the checkpoint see one
// array; tensors() names the pieces, in buffer order:
//   dlrm       bottom_mlp.<l>.{weight,bias} (none without dense features),
//              top_mlp.<l>.{weight,bias}
//   wide_deep  deep_mlp.<l>.{weight,bias}, wide.bias [1], with wide_dense
//              also wide.dense [1, dense_features]
//   deepfm     deep_mlp.<l>.{weight,bias}, fm.bias [1]
//   dcn        cross.<l>.{weight,bias} [d0] each, deep_mlp.<l>.{weight,bias}
//              (the hidden layers only), final.weight [1, d0 + h], final.bias [1]
// with weights shaped [out, in] as PyTorch's nn.Linear.
//
// The math of each model (the tests hold a naive double-precision copy):
//   dlrm       z = ReLU-MLP_bottom(dense) (ReLU after every layer, so the
//              last width is embedding_dim); F = [z, e_1 … e_T]; the
//              interaction is [z, ⟨F_a, F_b⟩ for a = 1…T, b = 0…a−1] (the
//              strictly lower triangle, row by row, as the DLRM reference's
//              li/lj); logit = MLP_top(interaction), the last layer linear.
//              Without dense features there is no bottom MLP (bottom_mlp
//              empty): F = [e_1 … e_T] and the interaction is
//              [⟨F_a, F_b⟩ for a = 1…T−1, b = 0…a−1] (needs T ≥ 2).
//   wide_deep  logit = Σ_t w_t + Σ_c w_c + wide.bias + MLP_deep([dense,
//              e_1 … e_T]), where e_t are the first D floats of pooled vector
//              t and w_t its last float (the first-order weight; width D + 1);
//              c runs over the wide-only tables (model.crosses, pooled after
//              the T), of which only the weight w_c is read (their first D
//              floats get zero gradients); with wide_dense, + Σ_j
//              wide.dense_j · dense_j (summed by the GEMM).
//   deepfm     wide_deep's first-order and deep terms, plus the FM second
//              order ½ Σ_k [(Σ_t e_tk)² − Σ_t e_tk²].
//   dcn        x0 = [dense, e_1 … e_T] (width d0), x_{l+1} = x0·(x_l·w_l) +
//              b_l + x_l for cross_layers layers; h = ReLU-MLP over x0 of
//              deep_mlp's widths without its last (which must be 1: the
//              config's rule for every deep_mlp), and ReLU after each;
//              logit = final·[x_L, h] + final.bias. deep_mlp = [1] leaves
//              the cross network alone (h empty).
// Pooling (sum or mean) happens before the model, in the trainer.
//
// Every loop runs in a fixed order: the result depends only on the inputs
// (and on the backend's GEMM, itself deterministic). Buffers are sized to
// the largest slice seen: steady-state training allocates nothing.
//
// A device-resident model (RunsDeviceResident) computes only through the
// backend's model ops on buffers of the backend's memory; on a device
// backend (CUDA) params()/grads() stay the host copies the optimizer, the
// all-reduce and checkpoints use, and each step uploads the parameters once
// and downloads the gradients once (docs/gpu.md).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.hpp"
#include "configs/config.hpp"
#include "gpu/backend.hpp"
#include "gpu/backend_select.hpp"
#include "gpu/buffer.hpp"
#include "models/tensor.hpp"

namespace actorrec::models {

struct ModelSpec {
  config::ModelKind kind = config::ModelKind::kDlrm;
  uint32_t dense_features = 0;
  uint32_t tables = 0;
  uint32_t embedding_dim = 16;
  std::vector<int> bottom_mlp, top_mlp, deep_mlp;
  int cross_layers = 0;
  bool wide_dense = false;  // wide_deep: + wide.dense · dense in the logit
  // wide_deep: wide-only tables (model.crosses) pooled after the `tables`
  // the deep part sees; only their first-order weights enter the logit.
  uint32_t wide_tables = 0;
  gpu::Pooling pooling = gpu::Pooling::kSum;

  // The pooled vectors of a sample: the deep tables, then the wide-only ones.
  uint32_t pooled_tables() const { return tables + wide_tables; }
};

// `tables`: every table the trainer pools, the model.crosses (the last
// model.crosses.size() of them) included.
ModelSpec SpecOf(const config::ModelConfig& model, uint32_t dense_features, uint32_t tables);

// GEMM FLOPs per sample of one forward and backward pass (2 FLOPs per
// multiply-add): every MLP layer's forward, weight gradient and input
// gradient, which the model issues through gpu::Backend, except the input
// gradient of DLRM's bottom layer 0 (dense features need none); plus DLRM's
// interaction backward, the T × T by T × D product G·P per sample (a direct
// loop since it outran one sgemm per sample; the forward's pair products are
// not counted). Without dense features DLRM has no bottom MLP, and its top
// MLP's input is the T(T − 1)/2 pairs. The numerator of the training
// roofline. 0 for a spec Create rejects.
double MlpFlopsPerSample(const ModelSpec& spec);

// The (inputs, outputs) of every MLP layer the model computes through the
// backend's GEMM, in order: DLRM's bottom then top MLP (the top's input the
// interaction's width), Wide&Deep's and DeepFM's deep MLP over [dense,
// e_1 … e_T], DCN's hidden layers over x0 (its final layer is not a GEMM).
// The shapes a roofline measurement times (tools/bench/sgemm_rate.hpp).
// Empty for a spec Create rejects.
std::vector<std::pair<int, int>> MlpLayerShapes(const ModelSpec& spec);

// Whether a model of this kind runs device-resident on a backend with
// memory of its own (gpu::Backend::device_memory(): its parameters'
// working copy, activations and gradients in that memory, docs/gpu.md);
// the others run there staged. What training.backend = auto decides on.
bool RunsDeviceResident(config::ModelKind kind);
gpu::ModelResidency ResidencyOf(config::ModelKind kind);

struct SliceView {
  size_t samples = 0;
  const float* dense = nullptr;   // samples × dense_features, row-major (dense_rows × … with dense_of)
  const float* labels = nullptr;  // 0 or 1
  // Whether the pooled embeddings and their gradient (Forward's `pooled`,
  // Backward's `pooled_grad`) are in the backend's memory: the trainer
  // pooled them there (docs/gpu.md "The embedding path on the device"), so
  // a device-resident model neither uploads them nor downloads their
  // gradient. False: host memory. On a host backend both are the same.
  bool pooled_resident = false;
  // Deduplicated dense rows (a dedup group with dense = true, the
  // trainer's data::DenseDedup): `dense` holds dense_rows distinct rows and
  // sample i's is row dense_of[i] (host memory). Null: one row per sample.
  // Only a model whose DedupsDense() is true is given it.
  const uint32_t* dense_of = nullptr;
  size_t dense_rows = 0;
  // The same dense rows and labels already in the backend's memory (the
  // trainer uploaded them ahead of the batch: docs/gpu.md "A batch's inputs
  // go up ahead"), or null: a device-resident model uploads `dense` and
  // `labels` itself.
  const float* dense_on = nullptr;
  const float* labels_on = nullptr;
};

class Model {
 public:
  // InvalidArgument naming the config key when the shape is impossible
  // (e.g. "model.bottom_mlp: last width 8 must equal embedding_dim 16").
  static Result<std::unique_ptr<Model>> Create(const ModelSpec& spec, gpu::Backend* backend);
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Floats of a pooled embedding and of a row's weights: embedding_dim, plus
  // one first-order weight (the last float) for Wide&Deep and DeepFM.
  uint32_t embedding_width() const { return width_; }
  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  // Whether Backward leaves the dense gradient in the backend's memory
  // only (resident_grads()), not also in grads(): a trainer whose sums run
  // in the backend's memory (docs/gpu.md "Sums in the backend's memory")
  // sets it, and grads() then keeps only its size. No effect on a host
  // backend, whose resident gradient is grads() itself.
  void KeepGradsResident(bool on) { grads_resident_ = on; }
  // After Backward: the dense gradient as the backend sees it (grads() on a
  // host backend; on a device, the buffer Backward wrote).
  const float* resident_grads() const {
    return backend_->device_memory() ? dev_grads_.data() : grads_.data();
  }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const ModelSpec& spec() const { return spec_; }
  // The backend the model computes on.
  gpu::Backend& backend() const { return *backend_; }
  // Whether Forward and Backward take a SliceView with dense_of: DLRM with
  // a bottom MLP, which then runs once per distinct dense row and expands
  // its output to the samples (Backend::GatherRows); its backward sums the
  // samples' gradients per distinct row in ascending sample order
  // (Backend::SumRowsByIndex) before the bottom MLP's backward over the
  // distinct rows. The other models read every sample's dense row.
  virtual bool DedupsDense() const { return false; }

  // Weights from (seed, tensor index, element) alone, normal with the DLRM
  // reference's scales: weights N(0, 2 / (in + out)), biases N(0, 1 / out);
  // DCN's cross weights count as [d0, 1] and its cross biases start at 0, so
  // that each cross layer starts close to its residual identity.
  void Initialize(uint64_t seed);

  // The forward pass: the slice's logits (logits()), keeping what Backward
  // needs. in.samples may be 0.
  virtual void Forward(const SliceView& in, const float* pooled) = 0;
  // After Forward(in, pooled) and nothing else: overwrites grads() and
  // pooled_grad (shape of pooled) with the gradients of
  // grad_scale × Σ_i BCEWithLogits(logit_i, label_i); returns the unscaled
  // Σ_i loss_i (0 for no samples, with zero gradients). Two calls so that
  // trainers can time the passes apart.
  virtual double Backward(const SliceView& in, const float* pooled, float* pooled_grad, float grad_scale) = 0;
  // After Forward: the logits (not probabilities) of its slice's samples,
  // on the host.
  const float* logits() const { return logits_at_; }

  // Forward then Backward.
  double ForwardBackward(const SliceView& in, const float* pooled, float* pooled_grad, float grad_scale) {
    Forward(in, pooled);
    return Backward(in, pooled, pooled_grad, grad_scale);
  }
  // Forward, with the logits copied to `logits` (in.samples floats).
  void Predict(const SliceView& in, const float* pooled, float* logits);

 protected:
  Model(ModelSpec spec, gpu::Backend* backend, uint32_t width) : spec_(std::move(spec)), backend_(backend), width_(width) {}
  // Declares a tensor; returns its offset. Call only in the constructor.
  size_t AddTensor(std::string name, std::vector<int64_t> shape, bool is_bias);
  void FinishTensors();

  // A device-resident step's copies (docs/gpu.md); on a host backend each
  // is the host buffer itself and copies nothing. ResidentParams: the
  // parameters as the backend sees them, uploaded once per Forward (the
  // dense optimizer steps the host copy). GradsTarget / PooledGradTarget:
  // where Backward writes the gradients; FinishBackward brings them to
  // grads() and the caller's pooled_grad.
  const float* ResidentParams() { return up_params_.Resident(*backend_, params_.data(), params_.size()); }
  // Where every resident Backward starts: the slice's labels in the
  // backend's memory, *dlogit = scale · (σ(z) − y) in the model's buffer;
  // returns the summed BCE of `logits` (backend memory).
  double LossGradient(const SliceView& in, const float* logits, float scale, float** dlogit) {
    const float* labels = in.labels_on ? in.labels_on : up_labels_.Resident(*backend_, in.labels, in.samples);
    *dlogit = dlogit_.Grow(*backend_, in.samples);
    return backend_->BceWithLogits(logits, labels, in.samples, scale, *dlogit);
  }
  // Where every Forward ends: its logits (backend memory) become logits(),
  // on a device backend through one download into a host copy.
  void KeepLogits(const float* logits, size_t n) {
    logits_at_ = logits;
    if (!backend_->device_memory()) return;
    if (host_logits_.size() < n) host_logits_.resize(n);
    backend_->Download(host_logits_.data(), logits, n);
    logits_at_ = host_logits_.data();
  }
  float* GradsTarget() {
    return backend_->device_memory() ? dev_grads_.Grow(*backend_, grads_.size()) : grads_.data();
  }
  // The slice's pooled embeddings as the backend sees them: `pooled` itself
  // when it is there already (in.pooled_resident, or a host backend), else
  // uploaded into `up`.
  const float* PooledOn(const SliceView& in, gpu::Buffer& up, const float* pooled, size_t floats) {
    return in.pooled_resident ? pooled : up.Resident(*backend_, pooled, floats);
  }
  // The slice's dense rows (`floats` of them) as the backend sees them:
  // in.dense_on when the trainer uploaded them ahead, else `in.dense`
  // itself (a host backend) or uploaded into `up`.
  const float* DenseOn(const SliceView& in, gpu::Buffer& up, size_t floats) {
    return in.dense_on ? in.dense_on : up.Resident(*backend_, in.dense, floats);
  }
  float* PooledGradTarget(const SliceView& in, float* pooled_grad, size_t floats) {
    return backend_->device_memory() && !in.pooled_resident ? dev_pooled_grad_.Grow(*backend_, floats)
                                                            : pooled_grad;
  }
  void FinishBackward(const SliceView& in, const float* grads, const float* dpooled, float* pooled_grad,
                      size_t floats) {
    if (!backend_->device_memory()) return;
    if (!grads_resident_) backend_->Download(grads_.data(), grads, grads_.size());
    if (!in.pooled_resident) backend_->Download(pooled_grad, dpooled, floats);
  }

  ModelSpec spec_;
  gpu::Backend* backend_;
  uint32_t width_;
  std::vector<float> params_, grads_;
  std::vector<TensorInfo> tensors_;
  std::vector<bool> is_bias_;

 private:
  gpu::Buffer up_params_, dev_grads_, dev_pooled_grad_, up_labels_, dlogit_;
  const float* logits_at_ = nullptr;
  bool grads_resident_ = false;
  std::vector<float> host_logits_;  // a device backend's logits, downloaded
};

}  // namespace actorrec::models
