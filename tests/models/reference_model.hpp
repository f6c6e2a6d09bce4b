// A naive double-precision copy of the four models' math (models/model.hpp),
// written from the papers' formulas and reading the parameters by tensor
// name: the tests compare the float models' logits with it, and their
// gradients with its central differences.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace actorrec::models::testing {

class ReferenceModel {
 public:
  ReferenceModel(const ModelSpec& spec, const std::vector<TensorInfo>& tensors, uint32_t width)
      : spec_(spec), width_(width) {
    for (const TensorInfo& t : tensors) index_[t.name] = t;
  }

  // The logit of one sample: dense has dense_features values, pooled has
  // (tables + wide_tables) × width values.
  double Logit(const std::vector<double>& p, const double* dense, const double* pooled) const {
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    auto e = [&](size_t t) { return std::vector<double>(pooled + t * width_, pooled + t * width_ + d); };
    std::vector<double> x0(dense, dense + dd);
    for (size_t t = 0; t < T; ++t) {
      auto et = e(t);
      x0.insert(x0.end(), et.begin(), et.end());
    }
    switch (spec_.kind) {
      case config::ModelKind::kDlrm: {
        // Without dense features there is no bottom MLP and no z: F and the
        // interaction hold the embeddings and their pairs alone.
        std::vector<std::vector<double>> f;
        std::vector<double> r;
        if (dd > 0) {
          std::vector<double> z = Mlp(p, "bottom_mlp", std::vector<double>(dense, dense + dd), true);
          f.push_back(z);
          r = z;
        }
        for (size_t t = 0; t < T; ++t) f.push_back(e(t));
        for (size_t a = 1; a < f.size(); ++a) {
          for (size_t b = 0; b < a; ++b) {
            double s = 0;
            for (size_t k = 0; k < d; ++k) s += f[a][k] * f[b][k];
            r.push_back(s);
          }
        }
        return Mlp(p, "top_mlp", r, false)[0];
      }
      case config::ModelKind::kWideDeep:
      case config::ModelKind::kDeepFm: {
        const bool fm = spec_.kind == config::ModelKind::kDeepFm;
        double logit = Mlp(p, "deep_mlp", x0, false)[0] + p[At(fm ? "fm.bias" : "wide.bias")];
        for (size_t t = 0; t < T; ++t) logit += pooled[t * width_ + d];
        // Wide&Deep's crosses (wide_tables after the T): their weight alone.
        for (size_t c = 0; c < spec_.wide_tables; ++c) logit += pooled[(T + c) * width_ + d];
        if (index_.count("wide.dense")) {  // wide_dense: the dense features in the wide part
          for (size_t j = 0; j < dd; ++j) logit += p[At("wide.dense") + j] * dense[j];
        }
        if (fm) {
          for (size_t k = 0; k < d; ++k) {
            double sum = 0, squares = 0;
            for (size_t t = 0; t < T; ++t) sum += pooled[t * width_ + k], squares += pooled[t * width_ + k] * pooled[t * width_ + k];
            logit += 0.5 * (sum * sum - squares);
          }
        }
        return logit;
      }
      case config::ModelKind::kDcn: {
        std::vector<double> x = x0;
        for (int l = 0; l < spec_.cross_layers; ++l) {
          const std::string name = "cross." + std::to_string(l);
          double s = 0;
          for (size_t k = 0; k < x.size(); ++k) s += x[k] * p[At(name + ".weight") + k];
          for (size_t k = 0; k < x.size(); ++k) x[k] = x0[k] * s + p[At(name + ".bias") + k] + x[k];
        }
        std::vector<double> h = index_.count("deep_mlp.0.weight") ? Mlp(p, "deep_mlp", x0, true) : std::vector<double>{};
        x.insert(x.end(), h.begin(), h.end());
        double logit = p[At("final.bias")];
        for (size_t k = 0; k < x.size(); ++k) logit += p[At("final.weight") + k] * x[k];
        return logit;
      }
    }
    return 0.0;
  }

  // Σ_i BCEWithLogits over n samples.
  double Loss(const std::vector<double>& p, size_t n, const std::vector<double>& dense,
              const std::vector<double>& pooled, const std::vector<float>& labels) const {
    double loss = 0;
    for (size_t i = 0; i < n; ++i) {
      const double z = Logit(p, dense.data() + i * spec_.dense_features, pooled.data() + i * spec_.pooled_tables() * width_);
      loss += std::max(z, 0.0) - z * labels[i] + std::log1p(std::exp(-std::fabs(z)));
    }
    return loss;
  }

 private:
  size_t At(const std::string& name) const { return index_.at(name).offset; }

  // Layers "<name>.<l>" while they exist; ReLU after each but the last
  // unless relu_last.
  std::vector<double> Mlp(const std::vector<double>& p, const std::string& name, std::vector<double> x,
                          bool relu_last) const {
    for (int l = 0;; ++l) {
      const std::string prefix = name + "." + std::to_string(l);
      auto it = index_.find(prefix + ".weight");
      if (it == index_.end()) return x;
      const auto out = static_cast<size_t>(it->second.shape[0]), in = static_cast<size_t>(it->second.shape[1]);
      std::vector<double> y(out);
      for (size_t j = 0; j < out; ++j) {
        double s = p[At(prefix + ".bias") + j];
        for (size_t k = 0; k < in; ++k) s += p[it->second.offset + j * in + k] * x.at(k);
        y[j] = s;
      }
      const bool last = index_.count(name + "." + std::to_string(l + 1) + ".weight") == 0;
      if (!last || relu_last) {
        for (double& v : y) v = std::max(v, 0.0);
      }
      x = std::move(y);
    }
  }

  ModelSpec spec_;
  uint32_t width_;
  std::map<std::string, TensorInfo> index_;
};

}  // namespace actorrec::models::testing
