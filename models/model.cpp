#include "models/model.hpp"

#include <algorithm>
#include <cmath>

#include "data/gen/random.hpp"
#include "models/model_kinds.hpp"

namespace actorrec::models {
namespace {

// Checks an MLP's widths; last > 0 demands that value of the last width,
// described by last_what ("embedding_dim 16", "1 (the logit)").
Status CheckWidths(const char* key, const std::vector<int>& widths, int last, const std::string& last_what) {
  const std::string where = std::string("model.").append(key).append(": ");
  if (widths.empty()) return Status::InvalidArgument(std::string(where).append("needs at least one layer"));
  for (size_t l = 0; l < widths.size(); ++l) {
    if (widths[l] <= 0) {
      return Status::InvalidArgument(std::string(where).append("width ").append(std::to_string(widths[l]))
                                         .append(" at position ").append(std::to_string(l)).append(" must be positive"));
    }
  }
  if (last > 0 && widths.back() != last) {
    return Status::InvalidArgument(std::string(where).append("last width ").append(std::to_string(widths.back()))
                                       .append(" must equal ").append(last_what));
  }
  return Status::Ok();
}

// GEMM FLOPs per sample of an MLP over `in` inputs (see Mlp::FlopsPerSample).
double MlpFlops(int in, const std::vector<int>& widths, bool input_grad) {
  double flops = 0.0;
  for (size_t l = 0; l < widths.size(); ++l) {
    flops += (l == 0 && !input_grad ? 2.0 : 3.0) * 2.0 * in * widths[l];
    in = widths[l];
  }
  return flops;
}

}  // namespace

ModelSpec SpecOf(const config::ModelConfig& model, uint32_t dense_features, uint32_t tables) {
  ModelSpec s;
  s.kind = model.kind;
  s.dense_features = dense_features;
  s.wide_tables = static_cast<uint32_t>(std::min<size_t>(model.crosses.size(), tables));
  s.tables = tables - s.wide_tables;
  s.embedding_dim = static_cast<uint32_t>(model.embedding_dim);
  s.bottom_mlp = model.bottom_mlp;
  s.top_mlp = model.top_mlp;
  s.deep_mlp = model.deep_mlp;
  s.cross_layers = model.cross_layers;
  s.wide_dense = model.wide_dense;
  s.pooling = model.pooling == "mean" ? gpu::Pooling::kMean : gpu::Pooling::kSum;
  return s;
}

bool RunsDeviceResident(config::ModelKind kind) {
  switch (kind) {
    case config::ModelKind::kDlrm:
    case config::ModelKind::kWideDeep:
    case config::ModelKind::kDeepFm:
    case config::ModelKind::kDcn:
      return true;
  }
  return false;
}

gpu::ModelResidency ResidencyOf(config::ModelKind kind) {
  return {RunsDeviceResident(kind), std::string(config::ModelKindName(kind))};
}

double MlpFlopsPerSample(const ModelSpec& spec) {
  const double d = spec.embedding_dim, T = spec.tables;
  const int x0 = static_cast<int>(spec.dense_features + spec.tables * spec.embedding_dim);
  switch (spec.kind) {
    case config::ModelKind::kDlrm:
      return MlpFlops(static_cast<int>(spec.dense_features), spec.bottom_mlp, false) +
             MlpFlops(DlrmInteractionWidth(spec), spec.top_mlp, true) + 2.0 * T * T * d;
    case config::ModelKind::kWideDeep:
    case config::ModelKind::kDeepFm:
      return MlpFlops(x0, spec.deep_mlp, true);
    case config::ModelKind::kDcn:
      if (spec.deep_mlp.empty()) return 0.0;
      return MlpFlops(x0, std::vector<int>(spec.deep_mlp.begin(), spec.deep_mlp.end() - 1), true);
  }
  return 0.0;
}

std::vector<std::pair<int, int>> MlpLayerShapes(const ModelSpec& spec) {
  std::vector<std::pair<int, int>> layers;
  auto add = [&layers](int in, const std::vector<int>& widths, size_t count) {
    for (size_t l = 0; l < count; ++l) layers.push_back({in, widths[l]}), in = widths[l];
  };
  const int x0 = static_cast<int>(spec.dense_features + spec.tables * spec.embedding_dim);
  switch (spec.kind) {
    case config::ModelKind::kDlrm:
      add(static_cast<int>(spec.dense_features), spec.bottom_mlp, spec.bottom_mlp.size());
      add(DlrmInteractionWidth(spec), spec.top_mlp, spec.top_mlp.size());
      break;
    case config::ModelKind::kWideDeep:
    case config::ModelKind::kDeepFm:
      add(x0, spec.deep_mlp, spec.deep_mlp.size());
      break;
    case config::ModelKind::kDcn:
      if (!spec.deep_mlp.empty()) add(x0, spec.deep_mlp, spec.deep_mlp.size() - 1);
      break;
  }
  return layers;
}

size_t Model::AddTensor(std::string name, std::vector<int64_t> shape, bool is_bias) {
  TensorInfo t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.offset = params_.size();
  t.size = 1;
  for (int64_t s : t.shape) t.size *= static_cast<size_t>(s);
  params_.resize(params_.size() + t.size, 0.0f);
  tensors_.push_back(std::move(t));
  is_bias_.push_back(is_bias);
  return tensors_.back().offset;
}

void Model::FinishTensors() { grads_.assign(params_.size(), 0.0f); }

void Model::Predict(const SliceView& in, const float* pooled, float* logits_out) {
  Forward(in, pooled);
  std::copy(logits(), logits() + in.samples, logits_out);
}

void Model::Initialize(uint64_t seed) {
  for (size_t k = 0; k < tensors_.size(); ++k) {
    const TensorInfo& t = tensors_[k];
    double stddev;
    if (is_bias_[k]) {
      stddev = std::sqrt(1.0 / static_cast<double>(t.shape[0]));
      // Cross-layer biases start at zero: each cross layer then starts as a
      // near-identity residual, as in the DCN paper's implementations.
      if (t.name.rfind("cross.", 0) == 0) stddev = 0.0;
    } else {
      const double out = static_cast<double>(t.shape[0]);
      const double in = t.shape.size() > 1 ? static_cast<double>(t.shape[1]) : 1.0;
      stddev = std::sqrt(2.0 / (in + out));
    }
    // One SplitMix64 stream per (seed, tensor): a tensor's values do not
    // depend on the tensors declared before it.
    data::gen::Rng rng(data::gen::HashPair(seed, 0x6d6f64656c000000ULL + k));
    for (size_t e = 0; e < t.size; ++e) params_[t.offset + e] = static_cast<float>(stddev * rng.Normal());
  }
}

Result<std::unique_ptr<Model>> Model::Create(const ModelSpec& spec, gpu::Backend* backend) {
  if (backend == nullptr) return Status::InvalidArgument("model: no compute backend");
  if (spec.embedding_dim == 0) return Status::InvalidArgument("model.embedding_dim: must be positive");
  const std::string kind = config::ModelKindName(spec.kind);
  if (spec.wide_tables > 0 && spec.kind != config::ModelKind::kWideDeep) {
    return Status::InvalidArgument(std::string("model.crosses: apply only to kind = \"wide_deep\"; this model is kind = \"")
                                       .append(kind).append("\""));
  }
  switch (spec.kind) {
    case config::ModelKind::kDlrm: {
      // Dense features go through the bottom MLP; without them there is
      // none, and the interaction pairs the embeddings alone.
      if (spec.dense_features > 0) {
        const std::string dim = std::string("embedding_dim ").append(std::to_string(spec.embedding_dim));
        if (Status st = CheckWidths("bottom_mlp", spec.bottom_mlp, static_cast<int>(spec.embedding_dim), dim);
            !st.ok()) {
          return st;
        }
      } else if (!spec.bottom_mlp.empty()) {
        return Status::InvalidArgument(
            "model.bottom_mlp: must be absent without dense features (dataset.dense_features = 0): DLRM then has "
            "no bottom MLP");
      } else if (spec.tables < 2) {
        return Status::InvalidArgument(std::string("model.kind = \"dlrm\" without dense features needs at least 2 "
                                                   "tables for its pairwise interaction; the dataset has ")
                                           .append(std::to_string(spec.tables)));
      }
      if (Status st = CheckWidths("top_mlp", spec.top_mlp, 1, "1 (the logit)"); !st.ok()) return st;
      return MakeDlrm(spec, backend);
    }
    case config::ModelKind::kWideDeep:
    case config::ModelKind::kDeepFm:
    case config::ModelKind::kDcn: {
      if (Status st = CheckWidths("deep_mlp", spec.deep_mlp, 1, "1 (the logit)"); !st.ok()) return st;
      if (spec.dense_features == 0 && spec.tables == 0) {
        return Status::InvalidArgument(std::string("model.kind = \"").append(kind).append(
            "\" has no input: the dataset has neither dense features nor tables"));
      }
      if (spec.kind != config::ModelKind::kDcn) {
        return MakeWideDeep(spec, backend, spec.kind == config::ModelKind::kDeepFm);
      }
      if (spec.cross_layers < 1) {
        return Status::InvalidArgument(std::string("model.cross_layers: ").append(std::to_string(spec.cross_layers))
                                           .append(" must be at least 1 for kind = \"dcn\""));
      }
      return MakeDcn(spec, backend);
    }
  }
  return Status::InvalidArgument("model.kind: unknown");
}

}  // namespace actorrec::models
