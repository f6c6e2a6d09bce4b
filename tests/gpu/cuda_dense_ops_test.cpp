// The per-element functions of the CUDA kernels of the models' ops
// (gpu/cuda/dense_ops.hpp), compiled by g++ and compared bit for bit with
// the CPU code they mirror: the MLP's elementwise loops, Dot, BCE, DLRM's
// interaction (each against its models/ function), and Wide&Deep, DeepFM
// and DCN through a replay of a whole model step built from these
// functions and the CPU backend's GEMM, against the model itself. Plus the
// bound of the device's BCE (expf/log1pf within their documented ulps).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cuda_ops_values.hpp"
#include "gpu/cpu_backend.hpp"
#include "gpu/cuda/dense_ops.hpp"
#include "models/layers.hpp"
#include "models/model.hpp"
#include "models/model_kinds.hpp"

namespace actorrec::gpu::cuda {
namespace {

using testing::BitwiseDiff;
using testing::kMixes;
using testing::Mix;
using testing::Values;

const char* MixName(Mix mix) {
  switch (mix) {
    case Mix::kNormal: return "normal";
    case Mix::kSkewed: return "skewed";
    case Mix::kEdges: return "edges";
  }
  return "?";
}

// DLRM's interaction over n samples from the per-element functions, one
// output at a time as the kernels compute it (widths as the CPU's); z null
// without dense features.
void InteractionForwardHd(const float* z, const float* pooled, size_t n, size_t T, size_t d, float* r) {
  const size_t width = InteractionWidth(T, d, z != nullptr);
  for (size_t e = 0; e < n * width; ++e) {
    const size_t i = e / width;
    r[e] = InteractionOutput(z == nullptr ? nullptr : z + i * d, pooled + i * T * d, d, e % width);
  }
}

// dz is written only with z (both null without dense features).
void InteractionBackwardHd(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                           float* dz, float* dpooled) {
  const size_t width = InteractionWidth(T, d, z != nullptr);
  for (size_t i = 0; i < n; ++i) {
    const float* dri = dr + i * width;
    const float* pi = pooled + i * T * d;
    const float* zi = z == nullptr ? nullptr : z + i * d;
    if (zi != nullptr) {
      for (size_t k = 0; k < d; ++k) dz[i * d + k] = InteractionGradZ(dri, pi, T, d, k);
    }
    for (size_t a = 0; a < T; ++a) {
      for (size_t k = 0; k < d; ++k) dpooled[(i * T + a) * d + k] = InteractionGradPooled(dri, zi, pi, T, d, a, k);
    }
  }
}

}  // namespace

TEST_CASE("the MLP's per-element functions give the CPU's bits", "[gpu][cuda_ops]") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    for (Mix mix : kMixes) {
      Values v(seed * 3 + static_cast<uint64_t>(mix));
      const size_t n = v.Below(38), width = 1 + v.Below(67);
      INFO("seed " << seed << ", " << MixName(mix) << ", n " << n << ", width " << width);
      const std::vector<float> out = v.Vector(n * width, mix), bias = v.Vector(width, mix);
      for (bool relu : {false, true}) {
        std::vector<float> cpu = out, hd(n * width);
        models::AddBias(cpu.data(), bias.data(), n, static_cast<int>(width), relu);
        for (size_t e = 0; e < n * width; ++e) hd[e] = BiasAdd(out[e], bias[e % width], relu);
        INFO("relu " << relu);
        CHECK(BitwiseDiff(cpu, hd) == "");
      }
      const std::vector<float> go = v.Vector(n * width, mix);
      std::vector<float> cpu(n * width), hd(n * width);
      models::ReluGrad(go.data(), out.data(), cpu.data(), n * width);
      for (size_t e = 0; e < n * width; ++e) hd[e] = ReluGradOf(go[e], out[e]);
      CHECK(BitwiseDiff(cpu, hd) == "");
      std::vector<float> db(width, 7.0f), hd_db(width);
      models::BiasGrad(go.data(), n, static_cast<int>(width), db.data());
      for (size_t j = 0; j < width; ++j) hd_db[j] = ColumnSum(go.data(), n, width, j);
      CHECK(BitwiseDiff(db, hd_db) == "");
    }
  }
}

TEST_CASE("Relu keeps std::max's -0 and NaN", "[gpu][cuda_ops]") {
  CHECK(testing::Bits(Relu(-0.0f)) == testing::Bits(std::max(-0.0f, 0.0f)));
  CHECK(std::isnan(Relu(std::numeric_limits<float>::quiet_NaN())));
  CHECK(Relu(-1e-40f) == 0.0f);
  CHECK(testing::Bits(BiasAdd(-0.0f, -0.0f, true)) == testing::Bits(-0.0f));
}

TEST_CASE("Dot8 sums in models::Dot's order", "[gpu][cuda_ops]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    for (Mix mix : kMixes) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{16}, size_t{23}, size_t{64},
                       size_t{67}, size_t{129}}) {
        Values v(seed * 1000 + n * 3 + static_cast<uint64_t>(mix));
        const std::vector<float> a = v.Vector(n, mix), b = v.Vector(n, mix);
        const float cpu = models::Dot(a.data(), b.data(), n), hd = Dot8(a.data(), b.data(), n);
        INFO("seed " << seed << ", " << MixName(mix) << ", n " << n);
        CHECK(testing::Bits(cpu) == testing::Bits(hd));
      }
    }
  }
}

// BceWithLogits' dlogits bitwise and its double loss bitwise (the terms
// summed by SumLossTerms), over random logits and the edges of exp(−|z|):
// z = ±0, tiny, where exp underflows to subnormals and to 0, and huge.
TEST_CASE("BceSample and SumLossTerms give BceWithLogits' bits", "[gpu][cuda_ops]") {
  const float edges[] = {0.0f,    -0.0f,  1e-30f, -1e-30f, 1e-7f,  0.5f,   -0.5f,   1.0f,    -1.0f,   15.9f,
                         -17.0f,  20.0f,  -20.0f, 87.0f,   -88.5f, 89.0f,  -89.0f,  103.0f,  -104.0f, 110.0f,
                         -110.0f, 1e10f,  -1e10f, 3e38f,   -3e38f, 1e-40f, -1e-40f, 0.6931472f};
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Values v(seed);
    std::vector<float> z = v.Vector(200, Mix::kNormal), skew = v.Vector(100, Mix::kSkewed);
    for (float& x : z) x *= 8.0f;
    z.insert(z.end(), skew.begin(), skew.end());
    z.insert(z.end(), std::begin(edges), std::end(edges));
    const std::vector<float> y = v.Labels(z.size());
    for (float scale : {1.0f, 0.25f, 1.0f / 2048.0f, 3.0f}) {
      std::vector<float> dlogit(z.size()), hd_dlogit(z.size()), terms(z.size());
      const double loss = models::BceWithLogits(z.data(), y.data(), z.size(), scale, dlogit.data());
      for (size_t i = 0; i < z.size(); ++i) {
        const BceTerms t = BceSample(z[i], y[i], scale);
        terms[i] = t.loss;
        hd_dlogit[i] = t.dlogit;
      }
      INFO("seed " << seed << ", scale " << scale);
      CHECK(BitwiseDiff(dlogit, hd_dlogit) == "");
      const double hd_loss = SumLossTerms(terms.data(), terms.size());
      CHECK(std::memcmp(&loss, &hd_loss, sizeof loss) == 0);
    }
  }
}

// The device's expf is within 2 ulp and log1pf within 1 ulp of the true
// value (the CUDA guide's bounds), so within 2 and 1 ulp of each side of
// glibc's (which is within 1): perturbing e and l by up to ±3 and ±2 ulp
// covers both. Every perturbation keeps the loss term and dlogit within
// kBceTolerance; the largest change seen is checked to stay a quarter of it.
TEST_CASE("BCE stays within kBceTolerance when expf and log1pf are off by their ulp bounds", "[gpu][cuda_ops]") {
  Values v(17);
  std::vector<float> z;
  for (int k = -1100; k <= 1100; ++k) z.push_back(static_cast<float>(k) / 10.0f);
  for (int k = 0; k < 4000; ++k) z.push_back(v.Next(Mix::kNormal) * 6.0f);
  float worst_loss = 0.0f, worst_dlogit = 0.0f;
  for (float zi : z) {
    for (float y : {0.0f, 1.0f}) {
      for (float scale : {1.0f, 0.25f}) {
        const float e = std::exp(-std::fabs(zi)), l = std::log1p(e);
        const BceTerms exact = BceFromExp(zi, y, scale, e, l);
        for (int de = -3; de <= 3; ++de) {
          for (int dl = -2; dl <= 2; ++dl) {
            float pe = e, pl = l;
            for (int s = 0; s < std::abs(de); ++s) pe = std::nextafter(pe, de > 0 ? 2.0f : 0.0f);
            for (int s = 0; s < std::abs(dl); ++s) pl = std::nextafter(pl, dl > 0 ? 2.0f : 0.0f);
            const BceTerms off = BceFromExp(zi, y, scale, pe, pl);
            const float dloss = std::fabs(off.loss - exact.loss) / std::max(1.0f, std::fabs(exact.loss));
            const float ddlogit = std::fabs(off.dlogit - exact.dlogit) / scale;
            worst_loss = std::max(worst_loss, dloss);
            worst_dlogit = std::max(worst_dlogit, ddlogit);
          }
        }
      }
    }
  }
  INFO("largest relative change: loss " << worst_loss << ", dlogit " << worst_dlogit << " (bound "
                                        << kBceTolerance << ")");
  CHECK(worst_loss <= kBceTolerance / 4.0f);
  CHECK(worst_dlogit <= kBceTolerance / 4.0f);
  CHECK(worst_dlogit > 0.0f);  // the perturbation did reach the results
}

TEST_CASE("InteractionPairOf walks the strictly lower triangle row by row", "[gpu][cuda_ops]") {
  size_t t = 0;
  for (size_t a = 1; a <= 400; ++a) {
    for (size_t b = 0; b < a; ++b, ++t) {
      size_t ga = 0, gb = 0;
      InteractionPairOf(t, &ga, &gb);
      if (ga != a || gb != b) FAIL("pair " << t << ": (" << ga << ", " << gb << ") instead of (" << a << ", " << b << ")");
    }
  }
}

TEST_CASE("the interaction's per-element functions give InteractionForward/Backward's bits", "[gpu][cuda_ops]") {
  // d a multiple of 16 takes the CPU's vector paths, others its scalar one;
  // T past 4 and 16 crosses its row and column blocks.
  // Without dense features (no z: the pairs of the tables alone) too.
  const std::pair<size_t, size_t> shapes[] = {{1, 1}, {2, 3}, {3, 16}, {5, 7}, {26, 16}, {17, 32}, {26, 20}, {4, 33}};
  for (auto [T, d] : shapes) {
    for (bool with_z : {true, false}) {
      for (Mix mix : kMixes) {
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          Values v(T * 100 + d * 7 + seed * 13 + static_cast<uint64_t>(mix));
          const size_t n = 1 + v.Below(4), width = InteractionWidth(T, d, with_z);
          INFO("T " << T << ", d " << d << ", n " << n << ", " << MixName(mix) << ", seed " << seed << ", "
                    << (with_z ? "with z" : "no dense features"));
          const std::vector<float> z_values = v.Vector(n * d, mix);
          const float* z = with_z ? z_values.data() : nullptr;
          std::vector<float> pooled = v.Vector(n * T * d, mix);
          // An infinite embedding (a diverged row): the CPU's zero diagonal of
          // G turns it into NaN (0·∞), which the functions must do as well.
          if (mix == Mix::kEdges) pooled[v.Below(pooled.size())] = seed % 2 ? INFINITY : -INFINITY;
          std::vector<float> r(n * width), hd_r(n * width);
          std::vector<float> columns(d * ((T + (with_z ? 1 : 0) + 15) / 16 * 16));
          models::InteractionForward(z, pooled.data(), n, T, d, width, r.data(), columns.data());
          InteractionForwardHd(z, pooled.data(), n, T, d, hd_r.data());
          CHECK(BitwiseDiff(r, hd_r) == "");

          const std::vector<float> dr = v.Vector(n * width, mix);
          std::vector<float> dz(n * d), dp(n * T * d), hd_dz(n * d), hd_dp(n * T * d), G(T * T);
          float* dz_out = with_z ? dz.data() : nullptr;
          models::InteractionBackward(dr.data(), z, pooled.data(), n, T, d, width, dz_out, dp.data(), G.data());
          InteractionBackwardHd(dr.data(), z, pooled.data(), n, T, d, with_z ? hd_dz.data() : nullptr, hd_dp.data());
          CHECK(BitwiseDiff(dz, hd_dz) == "");
          CHECK(BitwiseDiff(dp, hd_dp) == "");
        }
      }
    }
  }
}

namespace {

// One model step (forward, BCE, backward) replayed on the host from the
// kernels' per-element functions, with the MLPs' GEMMs on the CPU backend
// exactly as models::Mlp issues them: what the CUDA path will compute, with
// cuBLAS in place of the CPU's GEMM. Reads the parameters by tensor name.
class HostReplay {
 public:
  HostReplay(const models::Model& m, gpu::Backend& be) : m_(m), spec_(m.spec()), be_(be) {
    for (const models::TensorInfo& t : m.tensors()) index_[t.name] = t;
    grads_.assign(m.params().size(), 0.0f);
  }

  // Returns the loss; logits(), grads() and pooled_grad() after.
  double Step(const std::vector<float>& dense, const std::vector<float>& labels, const std::vector<float>& pooled,
              size_t n, float scale) {
    pooled_grad_.assign(pooled.size(), 0.0f);
    switch (spec_.kind) {
      case config::ModelKind::kDlrm: return Dlrm(dense, labels, pooled, n, scale);
      case config::ModelKind::kWideDeep:
      case config::ModelKind::kDeepFm: return WideDeep(dense, labels, pooled, n, scale);
      case config::ModelKind::kDcn: return Dcn(dense, labels, pooled, n, scale);
    }
    return 0.0;
  }

  const std::vector<float>& logits() const { return logits_; }
  const std::vector<float>& grads() const { return grads_; }
  const std::vector<float>& pooled_grad() const { return pooled_grad_; }

 private:
  struct Layer {
    size_t in, out, w, b;
  };
  struct MlpRun {
    std::vector<Layer> layers;
    bool relu_last = false;
    const float* input = nullptr;
    std::vector<std::vector<float>> acts;
    const std::vector<float>& output() const { return acts.back(); }
  };

  const float* P(const std::string& name) const { return m_.params().data() + index_.at(name).offset; }
  size_t Offset(const std::string& name) const { return index_.at(name).offset; }

  MlpRun MakeMlp(const std::string& name, bool relu_last) const {
    MlpRun run;
    run.relu_last = relu_last;
    for (size_t l = 0;; ++l) {
      const std::string prefix = name + "." + std::to_string(l);
      auto it = index_.find(prefix + ".weight");
      if (it == index_.end()) break;
      run.layers.push_back({static_cast<size_t>(it->second.shape[1]), static_cast<size_t>(it->second.shape[0]),
                            it->second.offset, Offset(prefix + ".bias")});
    }
    return run;
  }

  void Forward(MlpRun& run, const float* x, size_t n) {
    const float* params = m_.params().data();
    run.input = x;
    run.acts.assign(run.layers.size(), {});
    for (size_t l = 0; l < run.layers.size(); ++l) {
      const Layer& L = run.layers[l];
      const float* in = l == 0 ? x : run.acts[l - 1].data();
      std::vector<float>& out = run.acts[l];
      out.assign(n * L.out, 0.0f);
      be_.Gemm(false, true, static_cast<int>(n), static_cast<int>(L.out), static_cast<int>(L.in), 1.0f, in,
               static_cast<int>(L.in), params + L.w, static_cast<int>(L.in), 0.0f, out.data(),
               static_cast<int>(L.out));
      const bool relu = l + 1 < run.layers.size() || run.relu_last;
      for (size_t e = 0; e < out.size(); ++e) out[e] = BiasAdd(out[e], params[L.b + e % L.out], relu);
    }
  }

  void Backward(MlpRun& run, const float* dy, size_t n, float* dx) {
    const float* params = m_.params().data();
    std::vector<float> g_out(dy, dy + n * run.layers.back().out);
    for (size_t l = run.layers.size(); l-- > 0;) {
      const Layer& L = run.layers[l];
      const bool relu = l + 1 < run.layers.size() || run.relu_last;
      std::vector<float> g(n * L.out);
      for (size_t e = 0; e < g.size(); ++e) g[e] = relu ? ReluGradOf(g_out[e], run.acts[l][e]) : g_out[e];
      const float* in = l == 0 ? run.input : run.acts[l - 1].data();
      be_.Gemm(true, false, static_cast<int>(L.out), static_cast<int>(L.in), static_cast<int>(n), 1.0f, g.data(),
               static_cast<int>(L.out), in, static_cast<int>(L.in), 0.0f, grads_.data() + L.w,
               static_cast<int>(L.in));
      for (size_t j = 0; j < L.out; ++j) grads_[L.b + j] = ColumnSum(g.data(), n, L.out, j);
      if (l == 0 && dx == nullptr) break;
      std::vector<float> next(n * L.in);
      be_.Gemm(false, false, static_cast<int>(n), static_cast<int>(L.in), static_cast<int>(L.out), 1.0f, g.data(),
               static_cast<int>(L.out), params + L.w, static_cast<int>(L.in), 0.0f, next.data(),
               static_cast<int>(L.in));
      if (l == 0) std::copy(next.begin(), next.end(), dx);
      g_out = std::move(next);
    }
  }

  double Bce(const std::vector<float>& labels, size_t n, float scale) {
    std::vector<float> terms(n);
    dlogit_.assign(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      const BceTerms t = BceSample(logits_[i], labels[i], scale);
      terms[i] = t.loss;
      dlogit_[i] = t.dlogit;
    }
    return SumLossTerms(terms.data(), n);
  }

  double Dlrm(const std::vector<float>& dense, const std::vector<float>& labels, const std::vector<float>& pooled,
              size_t n, float scale) {
    // No bottom MLP without dense features: z is then null.
    MlpRun bottom = MakeMlp("bottom_mlp", true), top = MakeMlp("top_mlp", false);
    const bool with_z = !bottom.layers.empty();
    const size_t d = spec_.embedding_dim, T = spec_.tables, width = InteractionWidth(T, d, with_z);
    if (with_z) Forward(bottom, dense.data(), n);
    const float* z = with_z ? bottom.output().data() : nullptr;
    std::vector<float> r(n * width);
    InteractionForwardHd(z, pooled.data(), n, T, d, r.data());
    Forward(top, r.data(), n);
    logits_ = top.output();
    const double loss = Bce(labels, n, scale);
    std::vector<float> dr(n * width), dz(n * d);
    Backward(top, dlogit_.data(), n, dr.data());
    InteractionBackwardHd(dr.data(), z, pooled.data(), n, T, d, with_z ? dz.data() : nullptr, pooled_grad_.data());
    if (with_z) Backward(bottom, dz.data(), n, nullptr);
    return loss;
  }

  double WideDeep(const std::vector<float>& dense, const std::vector<float>& labels,
                  const std::vector<float>& pooled, size_t n, float scale) {
    const bool fm = spec_.kind == config::ModelKind::kDeepFm;
    const size_t d = spec_.embedding_dim, T = spec_.tables, C = spec_.wide_tables, w = d + 1, dd = spec_.dense_features;
    const size_t xw = dd + T * d, pt = T + C;
    std::vector<float> x(n * xw), sums(n * d);
    for (size_t e = 0; e < x.size(); ++e) {
      const size_t i = e / xw;
      x[e] = DeepInput(dense.data() + i * dd, pooled.data() + i * pt * w, dd, d, w, e % xw);
    }
    MlpRun deep = MakeMlp("deep_mlp", false);
    Forward(deep, x.data(), n);
    const float bias = *P(fm ? "fm.bias" : "wide.bias");
    logits_.assign(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      logits_[i] = WideDeepLogit(deep.output()[i], pooled.data() + i * pt * w, T, C, d, w, bias, fm, sums.data() + i * d);
    }
    const double loss = Bce(labels, n, scale);
    std::vector<float> dx(n * xw);
    Backward(deep, dlogit_.data(), n, dx.data());
    for (size_t e = 0; e < pooled_grad_.size(); ++e) {
      const size_t i = e / (pt * w), t = e / w % pt, k = e % w;
      pooled_grad_[e] = WideDeepPooledGrad(dx.data() + i * xw, pooled.data() + i * pt * w,
                                           fm ? sums.data() + i * d : nullptr, dlogit_[i], dd, T, d, w, t, k);
    }
    grads_[Offset(fm ? "fm.bias" : "wide.bias")] = ColumnSum(dlogit_.data(), n, 1, 0);
    return loss;
  }

  double Dcn(const std::vector<float>& dense, const std::vector<float>& labels, const std::vector<float>& pooled,
             size_t n, float scale) {
    const size_t d = spec_.embedding_dim, T = spec_.tables, dd = spec_.dense_features, d0 = dd + T * d;
    const size_t L = static_cast<size_t>(spec_.cross_layers);
    std::vector<std::vector<float>> xs(L + 1, std::vector<float>(n * d0)), s(L, std::vector<float>(n));
    for (size_t e = 0; e < n * d0; ++e) {
      const size_t i = e / d0;
      xs[0][e] = DeepInput(dense.data() + i * dd, pooled.data() + i * T * d, dd, d, d, e % d0);
    }
    for (size_t l = 0; l < L; ++l) {
      const std::string prefix = "cross." + std::to_string(l);
      const float* w = P(prefix + ".weight");
      const float* b = P(prefix + ".bias");
      for (size_t i = 0; i < n; ++i) s[l][i] = Dot8(xs[l].data() + i * d0, w, d0);
      for (size_t e = 0; e < n * d0; ++e) xs[l + 1][e] = CrossOutput(xs[0][e], s[l][e / d0], b[e % d0], xs[l][e]);
    }
    MlpRun deep = MakeMlp("deep_mlp", true);
    const size_t hw = deep.layers.empty() ? 0 : deep.layers.back().out;
    if (hw > 0) Forward(deep, xs[0].data(), n);
    const float* fw = P("final.weight");
    const float fb = *P("final.bias");
    logits_.assign(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      logits_[i] = DcnLogit(fw, xs[L].data() + i * d0, d0, hw > 0 ? deep.output().data() + i * hw : nullptr, hw, fb);
    }
    const double loss = Bce(labels, n, scale);
    // The final layer.
    float* gfw = grads_.data() + Offset("final.weight");
    for (size_t k = 0; k < d0; ++k) gfw[k] = WeightedColumnSum(dlogit_.data(), xs[L].data(), n, d0, k);
    for (size_t k = 0; k < hw; ++k) gfw[d0 + k] = WeightedColumnSum(dlogit_.data(), deep.output().data(), n, hw, k);
    grads_[Offset("final.bias")] = ColumnSum(dlogit_.data(), n, 1, 0);
    std::vector<float> g(n * d0), dh(n * hw), dx0(n * d0, 0.0f), gs(n);
    for (size_t e = 0; e < n * d0; ++e) g[e] = Mul(dlogit_[e / d0], fw[e % d0]);
    for (size_t e = 0; e < n * hw; ++e) dh[e] = Mul(dlogit_[e / hw], fw[d0 + e % hw]);
    if (hw > 0) Backward(deep, dh.data(), n, dx0.data());
    // The cross layers, from the last.
    for (size_t l = L; l-- > 0;) {
      const std::string prefix = "cross." + std::to_string(l);
      const float* w = P(prefix + ".weight");
      float* gw = grads_.data() + Offset(prefix + ".weight");
      float* gb = grads_.data() + Offset(prefix + ".bias");
      for (size_t i = 0; i < n; ++i) gs[i] = Dot8(g.data() + i * d0, xs[0].data() + i * d0, d0);
      for (size_t k = 0; k < d0; ++k) {
        gw[k] = WeightedColumnSum(gs.data(), xs[l].data(), n, d0, k);
        gb[k] = ColumnSum(g.data(), n, d0, k);
      }
      for (size_t e = 0; e < n * d0; ++e) CrossBackwardElement(&g[e], &dx0[e], gs[e / d0], s[l][e / d0], w[e % d0]);
    }
    for (size_t e = 0; e < pooled_grad_.size(); ++e) {
      const size_t i = e / (T * d), k = dd + e % (T * d);
      pooled_grad_[e] = Add(g[i * d0 + k], dx0[i * d0 + k]);
    }
    return loss;
  }

  const models::Model& m_;
  const models::ModelSpec& spec_;
  gpu::Backend& be_;
  std::map<std::string, models::TensorInfo> index_;
  std::vector<float> logits_, dlogit_, grads_, pooled_grad_;
};

models::ModelSpec ReplaySpec(config::ModelKind kind, uint64_t seed) {
  Values v(seed * 31 + static_cast<uint64_t>(kind));
  models::ModelSpec s;
  s.kind = kind;
  const uint32_t dims[] = {1, 3, 8, 12, 16, 17};
  s.embedding_dim = dims[v.Below(6)];
  s.tables = 1 + static_cast<uint32_t>(v.Below(6));
  s.dense_features = 1 + static_cast<uint32_t>(v.Below(13));
  const int d = static_cast<int>(s.embedding_dim);
  s.bottom_mlp = v.Below(2) ? std::vector<int>{6, d} : std::vector<int>{5, 9, d};
  s.top_mlp = v.Below(2) ? std::vector<int>{7, 1} : std::vector<int>{6, 4, 1};
  const size_t deep = v.Below(3);
  s.deep_mlp = deep == 0 ? std::vector<int>{6, 1} : deep == 1 ? std::vector<int>{11, 4, 1} : std::vector<int>{1};
  if (kind != config::ModelKind::kDcn && s.deep_mlp.size() == 1) s.deep_mlp = {9, 1};
  s.cross_layers = 1 + static_cast<int>(v.Below(3));
  // Every third DLRM has no dense features: no bottom MLP, the pairs of
  // at least two tables.
  if (kind == config::ModelKind::kDlrm && seed % 3 == 0) {
    s.dense_features = 0;
    s.bottom_mlp.clear();
    s.tables = std::max<uint32_t>(s.tables, 2);
  }
  // Every other Wide&Deep has crosses: wide-only tables after the T.
  if (kind == config::ModelKind::kWideDeep && seed % 2 == 0) s.wide_tables = 1 + static_cast<uint32_t>(v.Below(3));
  return s;
}

}  // namespace

// Wide&Deep, DeepFM and DCN keep their per-element loops inside the model
// classes: the replay is checked against the model itself, and DLRM's with
// it (the whole step: MLP pieces, interaction and BCE together).
TEST_CASE("a model step replayed from the per-element functions gives the CPU model's bits", "[gpu][cuda_ops]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : {config::ModelKind::kDlrm, config::ModelKind::kWideDeep, config::ModelKind::kDeepFm,
                                 config::ModelKind::kDcn}) {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      const models::ModelSpec spec = ReplaySpec(kind, seed);
      auto m = models::Model::Create(spec, backend.get()).value();
      m->Initialize(seed);
      Values v(seed * 7 + 1);
      for (float& p : m->params()) p += 0.0625f * v.Next(Mix::kNormal);  // no bias left at 0 (DCN's start there)
      const Mix mix = kMixes[seed % 3 == 0 ? 2 : seed % 3 == 1 ? 0 : 1];
      const size_t n = 1 + v.Below(19);
      const std::vector<float> dense = v.Vector(n * spec.dense_features, mix);
      std::vector<float> pooled = v.Vector(n * spec.pooled_tables() * m->embedding_width(), mix);
      if (mix != Mix::kNormal) {
        for (float& x : pooled) x = std::fabs(x) > 4.0f ? x / 1e6f : x;  // keep the logits finite
      }
      const std::vector<float> labels = v.Labels(n);
      const float scale = seed % 2 ? 1.0f / static_cast<float>(n) : 0.5f;
      INFO(config::ModelKindName(kind) << " seed " << seed << ", " << MixName(mix) << ": d " << spec.embedding_dim
                                       << ", tables " << spec.tables << "+" << spec.wide_tables << ", dense " << spec.dense_features
                                       << ", cross " << spec.cross_layers << ", samples " << n);

      std::vector<float> pooled_grad(pooled.size(), 123.0f);
      const models::SliceView in{n, dense.data(), labels.data()};
      m->Forward(in, pooled.data());
      const std::vector<float> logits(m->logits(), m->logits() + n);
      const double loss = m->Backward(in, pooled.data(), pooled_grad.data(), scale);

      HostReplay replay(*m, *backend);
      const double hd_loss = replay.Step(dense, labels, pooled, n, scale);
      CHECK(BitwiseDiff(logits, replay.logits()) == "");
      CHECK(std::memcmp(&loss, &hd_loss, sizeof loss) == 0);
      CHECK(BitwiseDiff(std::vector<float>(m->grads().begin(), m->grads().end()), replay.grads()) == "");
      CHECK(BitwiseDiff(pooled_grad, replay.pooled_grad()) == "");
    }
  }
}

}  // namespace actorrec::gpu::cuda
