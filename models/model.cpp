#include "models/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "data/gen/random.hpp"

namespace actorrec::models {
namespace {

// A linear layer's place in the parameter buffer: weight [out, in], bias [out].
struct Linear {
  int in = 0, out = 0;
  size_t w = 0, b = 0;
};

// Σ_i BCEWithLogits(z_i, y_i), and dlogit_i = scale · (σ(z_i) − y_i).
double LossAndGrad(const float* logits, const float* labels, size_t n, float scale, float* dlogit) {
  double loss = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const float z = logits[i], y = labels[i];
    loss += std::max(z, 0.0f) - z * y + std::log1p(std::exp(-std::fabs(z)));
    const float sigma = z >= 0 ? 1.0f / (1.0f + std::exp(-z)) : std::exp(z) / (1.0f + std::exp(z));
    dlogit[i] = scale * (sigma - y);
  }
  return loss;
}

void Grow(std::vector<float>* v, size_t n) {
  if (v->size() < n) v->resize(n);
}

// An MLP: linear layers with ReLU after each, except after the last unless
// relu_last. Keeps its activations for the backward pass.
class Mlp {
 public:
  Mlp() = default;
  Mlp(std::vector<Linear> layers, bool relu_last) : layers_(std::move(layers)), relu_last_(relu_last) {}

  bool empty() const { return layers_.empty(); }
  int out_width() const { return layers_.back().out; }
  const float* output() const { return acts_.back().data(); }

  void Forward(gpu::Backend& be, const float* params, const float* x, size_t n) {
    acts_.resize(layers_.size());
    input_ = x;
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Linear& L = layers_[l];
      const float* in = l == 0 ? x : acts_[l - 1].data();
      Grow(&acts_[l], n * L.out);
      float* out = acts_[l].data();
      be.Gemm(false, true, static_cast<int>(n), L.out, L.in, 1.0f, in, L.in, params + L.w, L.in, 0.0f, out, L.out);
      const float* bias = params + L.b;
      const bool relu = l + 1 < layers_.size() || relu_last_;
      for (size_t i = 0; i < n; ++i) {
        float* o = out + i * L.out;
        for (int j = 0; j < L.out; ++j) {
          const float v = o[j] + bias[j];
          o[j] = relu ? std::max(v, 0.0f) : v;
        }
      }
    }
  }

  // dy: the gradient of the output (n × out_width). Writes the parameter
  // gradients and, when dx is not null, the input gradient (n × in).
  void Backward(gpu::Backend& be, const float* params, float* grads, const float* dy, size_t n, float* dx) {
    grad_.resize(2);
    const float* g_in = dy;
    for (size_t l = layers_.size(); l-- > 0;) {
      const Linear& L = layers_[l];
      const bool relu = l + 1 < layers_.size() || relu_last_;
      std::vector<float>& g = grad_[l % 2];
      Grow(&g, n * L.out);
      const float* out = acts_[l].data();
      for (size_t k = 0; k < n * L.out; ++k) g[k] = relu && out[k] <= 0.0f ? 0.0f : g_in[k];
      const float* in = l == 0 ? input_ : acts_[l - 1].data();
      be.Gemm(true, false, L.out, L.in, static_cast<int>(n), 1.0f, g.data(), L.out, in, L.in, 0.0f, grads + L.w, L.in);
      float* db = grads + L.b;
      std::fill(db, db + L.out, 0.0f);
      for (size_t i = 0; i < n; ++i) {
        for (int j = 0; j < L.out; ++j) db[j] += g[i * L.out + j];
      }
      if (l > 0 || dx != nullptr) {
        // The input gradient becomes the next (lower) layer's output gradient.
        float* target = dx;
        if (l > 0) {
          std::vector<float>& next = grad_[(l + 1) % 2];
          Grow(&next, n * L.in);
          target = next.data();
        }
        be.Gemm(false, false, static_cast<int>(n), L.in, L.out, 1.0f, g.data(), L.out, params + L.w, L.in, 0.0f,
                target, L.in);
        g_in = target;
      }
    }
  }

 private:
  std::vector<Linear> layers_;
  bool relu_last_ = false;
  const float* input_ = nullptr;
  std::vector<std::vector<float>> acts_;
  std::vector<std::vector<float>> grad_;
};

// Shared by the models: declares an MLP's tensors.
template <class Add>
std::vector<Linear> DeclareMlp(Add&& add, const std::string& name, int in, const std::vector<int>& widths) {
  std::vector<Linear> layers;
  for (size_t l = 0; l < widths.size(); ++l) {
    Linear L;
    L.in = in;
    L.out = widths[l];
    const std::string p = name + "." + std::to_string(l);
    L.w = add(p + ".weight", std::vector<int64_t>{L.out, L.in}, false);
    L.b = add(p + ".bias", std::vector<int64_t>{L.out}, true);
    layers.push_back(L);
    in = L.out;
  }
  return layers;
}

// ---------------------------------------------------------------- DLRM

class Dlrm final : public Model {
 public:
  Dlrm(const ModelSpec& spec, gpu::Backend* be) : Model(spec, be, spec.embedding_dim) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    const int d = static_cast<int>(spec.embedding_dim);
    const int t = static_cast<int>(spec.tables) + 1;
    inter_ = d + t * (t - 1) / 2;
    bottom_ = Mlp(DeclareMlp(add, "bottom_mlp", static_cast<int>(spec.dense_features), spec.bottom_mlp), true);
    top_ = Mlp(DeclareMlp(add, "top_mlp", inter_, spec.top_mlp), false);
    FinishTensors();
  }

  double ForwardBackward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    const size_t n = in.samples;
    Forward(in, pooled);
    Grow(&dlogit_, n);
    const double loss = LossAndGrad(top_.output(), in.labels, n, scale, dlogit_.data());
    Grow(&dr_, n * inter_);
    top_.Backward(*backend_, params_.data(), grads_.data(), dlogit_.data(), n, dr_.data());
    const uint32_t d = spec_.embedding_dim, T = spec_.tables;
    Grow(&dz_, n * d);
    std::fill(pooled_grad, pooled_grad + n * T * d, 0.0f);
    const float* z = bottom_.output();
    for (size_t i = 0; i < n; ++i) {
      const float* dri = dr_.data() + i * inter_;
      float* dzi = dz_.data() + i * d;
      std::copy(dri, dri + d, dzi);
      auto v = [&](uint32_t a) { return a == 0 ? z + i * d : pooled + (i * T + a - 1) * d; };
      auto dv = [&](uint32_t a) { return a == 0 ? dzi : pooled_grad + (i * T + a - 1) * d; };
      size_t p = d;
      for (uint32_t a = 1; a <= T; ++a) {
        for (uint32_t b = 0; b < a; ++b, ++p) {
          const float g = dri[p];
          const float* va = v(a);
          const float* vb = v(b);
          float* ga = dv(a);
          float* gb = dv(b);
          for (uint32_t k = 0; k < d; ++k) {
            ga[k] += g * vb[k];
            gb[k] += g * va[k];
          }
        }
      }
    }
    bottom_.Backward(*backend_, params_.data(), grads_.data(), dz_.data(), n, nullptr);
    return loss;
  }

  void Predict(const SliceView& in, const float* pooled, float* logits) override {
    Forward(in, pooled);
    std::copy(top_.output(), top_.output() + in.samples, logits);
  }

 private:
  void Forward(const SliceView& in, const float* pooled) {
    const size_t n = in.samples;
    const uint32_t d = spec_.embedding_dim, T = spec_.tables;
    bottom_.Forward(*backend_, params_.data(), in.dense, n);
    const float* z = bottom_.output();
    Grow(&r_, n * inter_);
    for (size_t i = 0; i < n; ++i) {
      float* r = r_.data() + i * inter_;
      std::copy(z + i * d, z + (i + 1) * d, r);
      auto v = [&](uint32_t a) { return a == 0 ? z + i * d : pooled + (i * T + a - 1) * d; };
      size_t p = d;
      for (uint32_t a = 1; a <= T; ++a) {
        const float* va = v(a);
        for (uint32_t b = 0; b < a; ++b, ++p) {
          const float* vb = v(b);
          float s = 0.0f;
          for (uint32_t k = 0; k < d; ++k) s += va[k] * vb[k];
          r[p] = s;
        }
      }
    }
    top_.Forward(*backend_, params_.data(), r_.data(), n);
  }

  int inter_ = 0;
  Mlp bottom_, top_;
  std::vector<float> r_, dr_, dz_, dlogit_;
};

// ---------------------------------------------------------------- Wide&Deep, DeepFM

// x0 = [dense, e_1 … e_T] (the D embedding floats of each table) for the
// deep tower; the first-order weight of each row is the pooled vector's
// last float. DeepFM adds the FM second-order term over e_t.
class WideDeep final : public Model {
 public:
  WideDeep(const ModelSpec& spec, gpu::Backend* be, bool fm) : Model(spec, be, spec.embedding_dim + 1), fm_(fm) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    x_width_ = static_cast<int>(spec.dense_features + spec.tables * spec.embedding_dim);
    deep_ = Mlp(DeclareMlp(add, "deep_mlp", x_width_, spec.deep_mlp), false);
    bias_ = AddTensor(fm ? "fm.bias" : "wide.bias", {1}, true);
    FinishTensors();
  }

  double ForwardBackward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    const size_t n = in.samples;
    Forward(in, pooled);
    Grow(&dlogit_, n);
    const double loss = LossAndGrad(logits_.data(), in.labels, n, scale, dlogit_.data());
    Grow(&dx_, n * x_width_);
    deep_.Backward(*backend_, params_.data(), grads_.data(), dlogit_.data(), n, dx_.data());
    const uint32_t d = spec_.embedding_dim, T = spec_.tables, w = width_, dd = spec_.dense_features;
    float db = 0.0f;
    for (size_t i = 0; i < n; ++i) {
      const float g = dlogit_[i];
      db += g;
      const float* pi = pooled + i * T * w;
      float* gi = pooled_grad + i * T * w;
      const float* dxi = dx_.data() + i * x_width_ + dd;
      for (uint32_t t = 0; t < T; ++t) {
        std::copy(dxi + t * d, dxi + (t + 1) * d, gi + t * w);
        gi[t * w + d] = g;
      }
      if (fm_) {
        const float* s = sums_.data() + i * d;
        for (uint32_t t = 0; t < T; ++t) {
          for (uint32_t k = 0; k < d; ++k) gi[t * w + k] += g * (s[k] - pi[t * w + k]);
        }
      }
    }
    grads_[bias_] = db;
    return loss;
  }

  void Predict(const SliceView& in, const float* pooled, float* logits) override {
    Forward(in, pooled);
    std::copy(logits_.begin(), logits_.begin() + static_cast<std::ptrdiff_t>(in.samples), logits);
  }

 private:
  void Forward(const SliceView& in, const float* pooled) {
    const size_t n = in.samples;
    const uint32_t d = spec_.embedding_dim, T = spec_.tables, w = width_, dd = spec_.dense_features;
    Grow(&x_, n * x_width_);
    for (size_t i = 0; i < n; ++i) {
      float* xi = x_.data() + i * x_width_;
      std::copy(in.dense + i * dd, in.dense + (i + 1) * dd, xi);
      for (uint32_t t = 0; t < T; ++t) {
        const float* e = pooled + (i * T + t) * w;
        std::copy(e, e + d, xi + dd + t * d);
      }
    }
    deep_.Forward(*backend_, params_.data(), x_.data(), n);
    Grow(&logits_, n);
    if (fm_) Grow(&sums_, n * d);
    const float* deep = deep_.output();
    for (size_t i = 0; i < n; ++i) {
      const float* pi = pooled + i * T * w;
      float first = 0.0f;
      for (uint32_t t = 0; t < T; ++t) first += pi[t * w + d];
      float logit = deep[i] + first + params_[bias_];
      if (fm_) {
        float* s = sums_.data() + i * d;
        std::fill(s, s + d, 0.0f);
        float squares = 0.0f;
        for (uint32_t t = 0; t < T; ++t) {
          for (uint32_t k = 0; k < d; ++k) {
            const float v = pi[t * w + k];
            s[k] += v;
            squares += v * v;
          }
        }
        float total = 0.0f;
        for (uint32_t k = 0; k < d; ++k) total += s[k] * s[k];
        logit += 0.5f * (total - squares);
      }
      logits_[i] = logit;
    }
  }

  bool fm_;
  int x_width_ = 0;
  size_t bias_ = 0;
  Mlp deep_;
  std::vector<float> x_, dx_, logits_, dlogit_, sums_;
};

// ---------------------------------------------------------------- Deep&Cross (DCN v1)

// x0 = [dense, e_1 … e_T]; cross layers x_{l+1} = x0 · (x_l · w_l) + b_l + x_l;
// a deep tower (deep_mlp without its final width-1 layer, ReLU) over x0; the
// logit is one linear layer over [x_L, h].
class Dcn final : public Model {
 public:
  Dcn(const ModelSpec& spec, gpu::Backend* be) : Model(spec, be, spec.embedding_dim) {
    auto add = [this](std::string n, std::vector<int64_t> s, bool bias) { return AddTensor(std::move(n), std::move(s), bias); };
    d0_ = static_cast<int>(spec.dense_features + spec.tables * spec.embedding_dim);
    for (int l = 0; l < spec.cross_layers; ++l) {
      cross_w_.push_back(AddTensor("cross." + std::to_string(l) + ".weight", {d0_}, false));
      cross_b_.push_back(AddTensor("cross." + std::to_string(l) + ".bias", {d0_}, true));
    }
    std::vector<int> hidden(spec.deep_mlp.begin(), spec.deep_mlp.end() - 1);
    if (!hidden.empty()) deep_ = Mlp(DeclareMlp(add, "deep_mlp", d0_, hidden), true);
    h_ = hidden.empty() ? 0 : hidden.back();
    final_w_ = AddTensor("final.weight", {1, d0_ + h_}, false);
    final_b_ = AddTensor("final.bias", {1}, true);
    FinishTensors();
  }

  double ForwardBackward(const SliceView& in, const float* pooled, float* pooled_grad, float scale) override {
    const size_t n = in.samples;
    Forward(in, pooled);
    Grow(&dlogit_, n);
    const double loss = LossAndGrad(logits_.data(), in.labels, n, scale, dlogit_.data());
    const int L = spec_.cross_layers;
    const float* fw = params_.data() + final_w_;
    float* gfw = grads_.data() + final_w_;
    std::fill(gfw, gfw + d0_ + h_, 0.0f);
    float gfb = 0.0f;
    Grow(&g_, n * d0_);
    Grow(&dh_, n * std::max(h_, 1));
    const float* xl = xs_.data() + size_t(L) * n * d0_;
    const float* h = h_ ? deep_.output() : nullptr;
    for (size_t i = 0; i < n; ++i) {
      const float g = dlogit_[i];
      gfb += g;
      for (int k = 0; k < d0_; ++k) {
        gfw[k] += g * xl[i * d0_ + k];
        g_[i * d0_ + k] = g * fw[k];
      }
      for (int k = 0; k < h_; ++k) {
        gfw[d0_ + k] += g * h[i * h_ + k];
        dh_[i * h_ + k] = g * fw[d0_ + k];
      }
    }
    grads_[final_b_] = gfb;
    Grow(&dx0_, n * d0_);
    if (h_) {
      deep_.Backward(*backend_, params_.data(), grads_.data(), dh_.data(), n, dx0_.data());
    } else {
      std::fill(dx0_.begin(), dx0_.begin() + static_cast<std::ptrdiff_t>(n * d0_), 0.0f);
    }
    const float* x0 = xs_.data();
    for (int l = L - 1; l >= 0; --l) {
      const float* x = xs_.data() + size_t(l) * n * d0_;
      const float* w = params_.data() + cross_w_[l];
      float* gw = grads_.data() + cross_w_[l];
      float* gb = grads_.data() + cross_b_[l];
      std::fill(gw, gw + d0_, 0.0f);
      std::fill(gb, gb + d0_, 0.0f);
      for (size_t i = 0; i < n; ++i) {
        float* g = g_.data() + i * d0_;
        const float* x0i = x0 + i * d0_;
        const float* xi = x + i * d0_;
        float gx0 = 0.0f;
        for (int k = 0; k < d0_; ++k) gx0 += g[k] * x0i[k];
        const float s = s_[size_t(l) * n + i];
        float* dx0 = dx0_.data() + i * d0_;
        for (int k = 0; k < d0_; ++k) {
          gw[k] += gx0 * xi[k];
          gb[k] += g[k];
          dx0[k] += g[k] * s;
          g[k] += gx0 * w[k];  // now the gradient of x_l
        }
      }
    }
    // x_0 is x0 itself: its gradient joins the others.
    const uint32_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    for (size_t i = 0; i < n; ++i) {
      const float* g = g_.data() + i * d0_ + dd;
      const float* dx0 = dx0_.data() + i * d0_ + dd;
      float* out = pooled_grad + i * T * d;
      for (uint32_t k = 0; k < T * d; ++k) out[k] = g[k] + dx0[k];
    }
    return loss;
  }

  void Predict(const SliceView& in, const float* pooled, float* logits) override {
    Forward(in, pooled);
    std::copy(logits_.begin(), logits_.begin() + static_cast<std::ptrdiff_t>(in.samples), logits);
  }

 private:
  void Forward(const SliceView& in, const float* pooled) {
    const size_t n = in.samples;
    const int L = spec_.cross_layers;
    const uint32_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features;
    Grow(&xs_, size_t(L + 1) * n * d0_);
    Grow(&s_, size_t(std::max(L, 1)) * n);
    float* x0 = xs_.data();
    for (size_t i = 0; i < n; ++i) {
      std::copy(in.dense + i * dd, in.dense + (i + 1) * dd, x0 + i * d0_);
      std::copy(pooled + i * T * d, pooled + (i + 1) * T * d, x0 + i * d0_ + dd);
    }
    for (int l = 0; l < L; ++l) {
      const float* x = xs_.data() + size_t(l) * n * d0_;
      float* next = xs_.data() + size_t(l + 1) * n * d0_;
      const float* w = params_.data() + cross_w_[l];
      const float* b = params_.data() + cross_b_[l];
      for (size_t i = 0; i < n; ++i) {
        float s = 0.0f;
        for (int k = 0; k < d0_; ++k) s += x[i * d0_ + k] * w[k];
        s_[size_t(l) * n + i] = s;
        for (int k = 0; k < d0_; ++k) next[i * d0_ + k] = x0[i * d0_ + k] * s + b[k] + x[i * d0_ + k];
      }
    }
    if (h_) deep_.Forward(*backend_, params_.data(), x0, n);
    Grow(&logits_, n);
    const float* xl = xs_.data() + size_t(L) * n * d0_;
    const float* fw = params_.data() + final_w_;
    const float* h = h_ ? deep_.output() : nullptr;
    for (size_t i = 0; i < n; ++i) {
      float z = params_[final_b_];
      for (int k = 0; k < d0_; ++k) z += fw[k] * xl[i * d0_ + k];
      for (int k = 0; k < h_; ++k) z += fw[d0_ + k] * h[i * h_ + k];
      logits_[i] = z;
    }
  }

  int d0_ = 0, h_ = 0;
  std::vector<size_t> cross_w_, cross_b_;
  size_t final_w_ = 0, final_b_ = 0;
  Mlp deep_;
  std::vector<float> xs_, s_, logits_, dlogit_, g_, dh_, dx0_;
};

Status CheckWidths(const char* key, const std::vector<int>& widths, int last) {
  if (widths.empty()) return Status::InvalidArgument(std::string("model.") + key + ": needs at least one layer");
  for (int w : widths) {
    if (w <= 0) return Status::InvalidArgument(std::string("model.") + key + ": widths must be positive");
  }
  if (last > 0 && widths.back() != last) {
    return Status::InvalidArgument(std::string("model.") + key + ": last width " + std::to_string(widths.back()) +
                                   " must be " + std::to_string(last));
  }
  return Status::Ok();
}

}  // namespace

ModelSpec SpecOf(const config::ModelConfig& model, uint32_t dense_features, uint32_t tables) {
  ModelSpec s;
  s.kind = model.kind;
  s.dense_features = dense_features;
  s.tables = tables;
  s.embedding_dim = static_cast<uint32_t>(model.embedding_dim);
  s.bottom_mlp = model.bottom_mlp;
  s.top_mlp = model.top_mlp;
  s.deep_mlp = model.deep_mlp;
  s.cross_layers = model.cross_layers;
  s.pooling = model.pooling == "mean" ? gpu::Pooling::kMean : gpu::Pooling::kSum;
  return s;
}

double MlpFlopsPerSample(const ModelSpec& spec) {
  auto mlp = [](int in, const std::vector<int>& widths) {
    double f = 0;
    for (int w : widths) f += 3.0 * 2.0 * in * w, in = w;
    return f;
  };
  const int d = static_cast<int>(spec.embedding_dim);
  if (spec.kind == config::ModelKind::kDlrm) {
    const int t = static_cast<int>(spec.tables) + 1;
    return mlp(static_cast<int>(spec.dense_features), spec.bottom_mlp) + mlp(d + t * (t - 1) / 2, spec.top_mlp);
  }
  return mlp(static_cast<int>(spec.dense_features + spec.tables * spec.embedding_dim), spec.deep_mlp);
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

void Model::Initialize(uint64_t seed) {
  for (size_t k = 0; k < tensors_.size(); ++k) {
    const TensorInfo& t = tensors_[k];
    double stddev;
    if (is_bias_[k]) {
      stddev = std::sqrt(1.0 / static_cast<double>(t.shape[0]));
    } else {
      const double out = static_cast<double>(t.shape[0]);
      const double in = t.shape.size() > 1 ? static_cast<double>(t.shape[1]) : 1.0;
      stddev = std::sqrt(2.0 / (in + out));
    }
    // Cross-layer biases start at zero: each cross layer then starts as a
    // near-identity residual, as in the DCN paper's implementations.
    if (is_bias_[k] && t.name.rfind("cross.", 0) == 0) stddev = 0.0;
    data::gen::Rng rng(data::gen::HashPair(seed, 0x6d6f64656c000000ULL + k));
    for (size_t e = 0; e < t.size; ++e) params_[t.offset + e] = static_cast<float>(stddev * rng.Normal());
  }
}

Result<std::unique_ptr<Model>> Model::Create(const ModelSpec& spec, gpu::Backend* backend) {
  if (spec.embedding_dim == 0) return Status::InvalidArgument("model.embedding_dim: must be positive");
  switch (spec.kind) {
    case config::ModelKind::kDlrm: {
      if (Status st = CheckWidths("bottom_mlp", spec.bottom_mlp, static_cast<int>(spec.embedding_dim)); !st.ok()) return st;
      if (Status st = CheckWidths("top_mlp", spec.top_mlp, 1); !st.ok()) return st;
      if (spec.dense_features == 0) {
        return Status::InvalidArgument("model.kind = \"dlrm\" needs dense features (dataset.dense_features > 0) for its bottom MLP");
      }
      return std::unique_ptr<Model>(new Dlrm(spec, backend));
    }
    case config::ModelKind::kWideDeep:
    case config::ModelKind::kDeepFm:
      if (Status st = CheckWidths("deep_mlp", spec.deep_mlp, 1); !st.ok()) return st;
      return std::unique_ptr<Model>(new WideDeep(spec, backend, spec.kind == config::ModelKind::kDeepFm));
    case config::ModelKind::kDcn:
      if (Status st = CheckWidths("deep_mlp", spec.deep_mlp, 1); !st.ok()) return st;
      if (spec.cross_layers < 1) return Status::InvalidArgument("model.cross_layers: dcn needs at least 1");
      return std::unique_ptr<Model>(new Dcn(spec, backend));
  }
  return Status::InvalidArgument("model.kind: unknown");
}

}  // namespace actorrec::models
