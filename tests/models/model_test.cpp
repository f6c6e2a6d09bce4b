// The four models against a naive double-precision reference: logits, and
// every gradient (dense parameters and pooled embeddings) element by element
// against the reference's central differences, over many random shapes and
// seeds; plus determinism, bad shapes, empty slices and allocation-freedom.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "allocation_counter.hpp"
#include "data/gen/random.hpp"
#include "gpu/cpu_backend.hpp"
#include "models/model.hpp"
#include "random_inputs.hpp"
#include "reference_model.hpp"

namespace actorrec::models {
namespace {

constexpr config::ModelKind kKinds[] = {config::ModelKind::kDlrm, config::ModelKind::kWideDeep,
                                        config::ModelKind::kDeepFm, config::ModelKind::kDcn};

// A small random shape: embedding dims around the Dot lanes' boundary
// (3 < 8 < 12), one to five tables, one- and two-hidden-layer MLPs, DCN with
// and without a deep tower.
ModelSpec RandomSpec(config::ModelKind kind, uint64_t seed) {
  data::gen::Rng rng(data::gen::HashPair(seed, 77));
  ModelSpec s;
  s.kind = kind;
  const uint32_t dims[] = {3, 8, 12};
  s.embedding_dim = dims[rng.Below(3)];
  s.tables = 1 + static_cast<uint32_t>(rng.Below(5));
  s.dense_features = 1 + static_cast<uint32_t>(rng.Below(4));
  const int d = static_cast<int>(s.embedding_dim);
  s.bottom_mlp = rng.Below(2) ? std::vector<int>{6, d} : std::vector<int>{5, 7, d};
  s.top_mlp = rng.Below(2) ? std::vector<int>{7, 1} : std::vector<int>{6, 4, 1};
  const uint64_t deep = rng.Below(3);
  s.deep_mlp = deep == 0 ? std::vector<int>{6, 1} : deep == 1 ? std::vector<int>{5, 4, 1} : std::vector<int>{1};
  if (kind != config::ModelKind::kDcn && s.deep_mlp.size() == 1) s.deep_mlp = {9, 1};
  s.cross_layers = 1 + static_cast<int>(rng.Below(3));
  return s;
}

std::vector<double> ToDouble(std::span<const float> v) { return {v.begin(), v.end()}; }

// The input width of DLRM's top MLP, from its first layer's weight shape.
size_t DlrmTopInput(const Model& m) {
  for (const TensorInfo& t : m.tensors()) {
    if (t.name == "top_mlp.0.weight") return static_cast<size_t>(t.shape[1]);
  }
  return 0;
}

// |analytic − numeric| within a relative 1e-3 of the larger of the element
// and a tenth of the largest gradient: float rounding in the model is ~1e-6
// relative; a wrong term is off by O(1).
void CheckGradients(const char* what, const std::vector<float>& analytic, const std::vector<double>& numeric) {
  double largest = 1e-6;
  for (double g : numeric) largest = std::max(largest, std::fabs(g));
  for (size_t k = 0; k < analytic.size(); ++k) {
    INFO(what << " element " << k << " of " << analytic.size());
    CHECK(std::fabs(analytic[k] - numeric[k]) <= 1e-3 * std::max(std::fabs(numeric[k]), 0.1 * largest));
  }
}

// The model's logits, loss and gradients (parameters and pooled) on `in`
// against the double-precision reference, by central differences.
void CheckAgainstReference(Model& m, const Inputs& in, float scale) {
  const ModelSpec& spec = m.spec();
  const size_t n = in.n;
  std::vector<float> pooled_grad(in.pooled.size(), 123.0f), logits(n);
  const double loss = m.ForwardBackward(in.view(), in.pooled.data(), pooled_grad.data(), scale);
  const std::vector<float> grads(m.grads().begin(), m.grads().end());
  m.Predict(in.view(), in.pooled.data(), logits.data());

  const testing::ReferenceModel ref(spec, m.tensors(), m.embedding_width());
  std::vector<double> p = ToDouble(m.params()), dense = ToDouble(in.dense), pooled = ToDouble(in.pooled);
  for (size_t i = 0; i < n; ++i) {
    const double z =
        ref.Logit(p, dense.data() + i * spec.dense_features, pooled.data() + i * spec.pooled_tables() * m.embedding_width());
    CHECK(logits[i] == Approx(z).epsilon(1e-4).margin(1e-4));
  }
  CHECK(loss == Approx(ref.Loss(p, n, dense, pooled, in.labels)).epsilon(1e-5));

  auto central = [&](std::vector<double>& x, size_t k) {
    const double h = 1e-6, saved = x[k];
    x[k] = saved + h;
    const double up = ref.Loss(p, n, dense, pooled, in.labels);
    x[k] = saved - h;
    const double down = ref.Loss(p, n, dense, pooled, in.labels);
    x[k] = saved;
    return scale * (up - down) / (2 * h);
  };
  std::vector<double> numeric(p.size());
  for (size_t k = 0; k < p.size(); ++k) numeric[k] = central(p, k);
  CheckGradients("parameter", grads, numeric);
  numeric.resize(pooled.size());
  for (size_t k = 0; k < pooled.size(); ++k) numeric[k] = central(pooled, k);
  CheckGradients("pooled", pooled_grad, numeric);
}

}  // namespace

TEST_CASE("every model's logits and gradients match a double-precision reference", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : kKinds) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const ModelSpec spec = RandomSpec(kind, seed);
      auto made = Model::Create(spec, backend.get());
      REQUIRE(made.ok());
      Model& m = **made;
      m.Initialize(seed);
      const size_t n = 1 + (seed * 4) % 9;
      Inputs in = RandomInputs(m, n, seed);
      const float scale = seed % 2 ? 1.0f : 0.25f;
      INFO(config::ModelKindName(kind) << " seed " << seed << ": d " << spec.embedding_dim << ", tables "
                                       << spec.tables << ", dense " << spec.dense_features << ", samples " << n);
      CheckAgainstReference(m, in, scale);
    }
  }
}

// The interaction's vector paths (d a multiple of 16; rows in blocks of 4
// and, past 16 vectors, column blocks of 16) at Criteo's 26 tables, and its
// scalar path at a d that is not: logits, loss and every gradient against
// the double-precision reference.
TEST_CASE("DLRM's interaction matches the reference at Criteo's shape", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (auto [tables, d] : {std::pair<uint32_t, uint32_t>{26, 16}, {17, 32}, {26, 20}, {3, 16}}) {
    ModelSpec spec;
    spec.kind = config::ModelKind::kDlrm;
    spec.dense_features = 3;
    spec.tables = tables;
    spec.embedding_dim = d;
    spec.bottom_mlp = {5, static_cast<int>(d)};
    spec.top_mlp = {3, 1};
    INFO("tables " << tables << ", d " << d);
    auto m = Model::Create(spec, backend.get()).value();
    m->Initialize(tables + d);
    CheckAgainstReference(*m, RandomInputs(*m, 3, d), 1.0f);
  }
}

// Without dense features DLRM has no bottom MLP and its interaction is the
// pairs of the T embeddings alone: from two tables (one pair) to Criteo's
// 26 (the vector paths at d = 16, 32; the scalar one at 3, 20).
TEST_CASE("DLRM without dense features matches the reference", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (auto [tables, d] : {std::pair<uint32_t, uint32_t>{2, 3}, {3, 8}, {5, 16}, {26, 16}, {17, 32}, {26, 20}}) {
    ModelSpec spec;
    spec.kind = config::ModelKind::kDlrm;
    spec.dense_features = 0;
    spec.tables = tables;
    spec.embedding_dim = d;
    spec.top_mlp = {4, 1};
    INFO("tables " << tables << ", d " << d);
    auto m = Model::Create(spec, backend.get()).value();
    REQUIRE(DlrmTopInput(*m) == tables * (tables - 1) / 2);
    for (const TensorInfo& t : m->tensors()) CHECK(t.name.rfind("top_mlp.", 0) == 0);
    m->Initialize(tables * d);
    const Inputs in = RandomInputs(*m, 1 + d % 5, tables);
    CheckAgainstReference(*m, in, 0.5f);
    CHECK(m->ForwardBackward(SliceView{}, nullptr, nullptr, 1.0f) == 0.0);
    CHECK(std::all_of(m->grads().begin(), m->grads().end(), [](float g) { return g == 0.0f; }));
  }
}

// Cheng et al. 2016's wide part over the raw dense features too
// (model.wide_dense): a weight per dense feature, added to the logit; the
// other tensors keep their initial values (wide.dense is declared last).
TEST_CASE("Wide&Deep with dense features in the wide part matches the reference", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ModelSpec spec = RandomSpec(config::ModelKind::kWideDeep, seed);
    spec.dense_features = 1 + seed % 5;
    spec.wide_dense = true;
    INFO("seed " << seed << ": dense " << spec.dense_features << ", tables " << spec.tables);
    auto m = Model::Create(spec, backend.get()).value();
    REQUIRE(m->tensors().back().name == "wide.dense");
    REQUIRE(m->tensors().back().size == spec.dense_features);
    m->Initialize(seed);
    CheckAgainstReference(*m, RandomInputs(*m, 1 + seed % 6, seed), seed % 2 ? 1.0f : 0.5f);
    // Without the option: the same tensors, less wide.dense, with the same values.
    ModelSpec plain = spec;
    plain.wide_dense = false;
    auto p = Model::Create(plain, backend.get()).value();
    p->Initialize(seed);
    REQUIRE(p->params().size() == m->params().size() - spec.dense_features);
    CHECK(std::equal(p->params().begin(), p->params().end(), m->params().begin()));
  }
}

// Cheng et al. 2016's crossed-feature columns (model.crosses): wide-only
// tables pooled after the deep ones, whose weight alone joins the logit;
// their embedding floats get zero gradients, and the deep part and every
// parameter are those of the model without them.
TEST_CASE("Wide&Deep with crossed columns matches the reference", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ModelSpec spec = RandomSpec(config::ModelKind::kWideDeep, seed);
    spec.wide_tables = 1 + seed % 3;
    spec.wide_dense = seed % 2 == 0;
    INFO("seed " << seed << ": tables " << spec.tables << " + " << spec.wide_tables << " crosses, d "
                 << spec.embedding_dim << ", wide_dense " << spec.wide_dense);
    auto m = Model::Create(spec, backend.get()).value();
    m->Initialize(seed);
    const Inputs in = RandomInputs(*m, 1 + seed % 7, seed);
    REQUIRE(in.pooled.size() == in.n * (spec.tables + spec.wide_tables) * m->embedding_width());
    CheckAgainstReference(*m, in, seed % 2 ? 1.0f : 0.5f);
    // The crosses' embedding floats are read by nothing: zero gradients.
    std::vector<float> grad(in.pooled.size(), 5.0f);
    m->ForwardBackward(in.view(), in.pooled.data(), grad.data(), 1.0f);
    const size_t w = m->embedding_width(), P = spec.tables + spec.wide_tables;
    for (size_t i = 0; i < in.n; ++i) {
      for (size_t t = spec.tables; t < P; ++t) {
        for (size_t k = 0; k + 1 < w; ++k) CHECK(grad[(i * P + t) * w + k] == 0.0f);
        CHECK(grad[(i * P + t) * w + w - 1] != 0.0f);
      }
    }
    // The same parameters as without crosses: they add rows, not tensors.
    ModelSpec plain = spec;
    plain.wide_tables = 0;
    auto p = Model::Create(plain, backend.get()).value();
    p->Initialize(seed);
    CHECK(std::equal(p->params().begin(), p->params().end(), m->params().begin(), m->params().end()));
  }
  // Only Wide&Deep has a wide part to cross into.
  for (config::ModelKind kind : {config::ModelKind::kDlrm, config::ModelKind::kDeepFm, config::ModelKind::kDcn}) {
    ModelSpec spec = RandomSpec(kind, 1);
    spec.wide_tables = 1;
    auto made = Model::Create(spec, backend.get());
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().message().find("model.crosses") != std::string::npos);
  }
}

TEST_CASE("a model's results depend only on its inputs", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : kKinds) {
    INFO(config::ModelKindName(kind));
    const ModelSpec spec = RandomSpec(kind, 5);
    auto a = Model::Create(spec, backend.get()).value();
    auto b = Model::Create(spec, backend.get()).value();
    a->Initialize(3);
    b->Initialize(3);
    CHECK(std::equal(a->params().begin(), a->params().end(), b->params().begin()));
    // b first sees a larger slice: its reused buffers must not leak into the result.
    Inputs big = RandomInputs(*b, 17, 8), in = RandomInputs(*a, 6, 1);
    std::vector<float> scratch(big.pooled.size());
    b->ForwardBackward(big.view(), big.pooled.data(), scratch.data(), 1.0f);
    std::vector<float> ga(in.pooled.size()), gb(in.pooled.size());
    CHECK(a->ForwardBackward(in.view(), in.pooled.data(), ga.data(), 0.5f) ==
          b->ForwardBackward(in.view(), in.pooled.data(), gb.data(), 0.5f));
    CHECK(ga == gb);
    CHECK(std::equal(a->grads().begin(), a->grads().end(), b->grads().begin()));
    b->Initialize(4);
    CHECK_FALSE(std::equal(a->params().begin(), a->params().end(), b->params().begin()));
  }
}

TEST_CASE("initialization follows the DLRM reference's scales", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  ModelSpec spec = RandomSpec(config::ModelKind::kDlrm, 1);
  spec.top_mlp = {400, 300, 1};
  auto m = Model::Create(spec, backend.get()).value();
  m->Initialize(11);
  for (const TensorInfo& t : m->tensors()) {
    if (t.name != "top_mlp.1.weight" && t.name != "top_mlp.0.bias") continue;
    double sum = 0, squares = 0;
    for (size_t e = 0; e < t.size; ++e) {
      const double v = m->params()[t.offset + e];
      sum += v, squares += v * v;
    }
    const double expected = t.name == "top_mlp.1.weight" ? 2.0 / (400 + 300) : 1.0 / 400;
    INFO(t.name);
    CHECK(std::fabs(sum / t.size) < 4 * std::sqrt(expected / t.size));
    CHECK(squares / t.size == Approx(expected).epsilon(0.15));
  }
}

TEST_CASE("tensors tile the parameter buffer in declaration order", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : kKinds) {
    const ModelSpec spec = RandomSpec(kind, 2);
    auto m = Model::Create(spec, backend.get()).value();
    size_t offset = 0;
    for (const TensorInfo& t : m->tensors()) {
      CHECK(t.offset == offset);
      size_t size = 1;
      for (int64_t s : t.shape) size *= static_cast<size_t>(s);
      CHECK(t.size == size);
      offset += t.size;
    }
    CHECK(offset == m->params().size());
    CHECK(m->grads().size() == m->params().size());
    const bool first_order = kind == config::ModelKind::kWideDeep || kind == config::ModelKind::kDeepFm;
    CHECK(m->embedding_width() == spec.embedding_dim + (first_order ? 1 : 0));
  }
}

TEST_CASE("an empty slice gives zero gradients and zero loss", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : kKinds) {
    auto m = Model::Create(RandomSpec(kind, 3), backend.get()).value();
    m->Initialize(1);
    std::fill(m->grads().begin(), m->grads().end(), 7.0f);
    CHECK(m->ForwardBackward(SliceView{}, nullptr, nullptr, 1.0f) == 0.0);
    CHECK(std::all_of(m->grads().begin(), m->grads().end(), [](float g) { return g == 0.0f; }));
  }
}

TEST_CASE("training steps allocate nothing once a slice size has been seen", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  for (config::ModelKind kind : kKinds) {
    INFO(config::ModelKindName(kind));
    auto m = Model::Create(RandomSpec(kind, 4), backend.get()).value();
    m->Initialize(1);
    Inputs big = RandomInputs(*m, 32, 1), small = RandomInputs(*m, 7, 2);
    std::vector<float> grad(big.pooled.size()), logits(big.n);
    m->ForwardBackward(big.view(), big.pooled.data(), grad.data(), 1.0f);
    m->Predict(big.view(), big.pooled.data(), logits.data());
    const uint64_t before = testing::AllocationsSoFar();
    m->ForwardBackward(big.view(), big.pooled.data(), grad.data(), 1.0f);
    m->ForwardBackward(small.view(), small.pooled.data(), grad.data(), 1.0f);
    m->Predict(small.view(), small.pooled.data(), logits.data());
    CHECK(testing::AllocationsSoFar() == before);
  }
}

TEST_CASE("a bad model shape names the key", "[models]") {
  auto backend = gpu::MakeCpuBackend();
  auto error_of = [&](const ModelSpec& s) {
    auto m = Model::Create(s, backend.get());
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == Status::Code::kInvalidArgument);
    return m.status().message();
  };
  ModelSpec dlrm = RandomSpec(config::ModelKind::kDlrm, 1);
  dlrm.embedding_dim = 16;
  dlrm.bottom_mlp = {32, 8};
  CHECK_THAT(error_of(dlrm), Catch::Contains("model.bottom_mlp: last width 8 must equal embedding_dim 16"));
  dlrm.bottom_mlp = {32, 16};
  dlrm.top_mlp = {8, 2};
  CHECK_THAT(error_of(dlrm), Catch::Contains("model.top_mlp: last width 2 must equal 1"));
  dlrm.top_mlp = {0, 1};
  CHECK_THAT(error_of(dlrm), Catch::Contains("model.top_mlp: width 0 at position 0 must be positive"));
  dlrm.top_mlp = {};
  CHECK_THAT(error_of(dlrm), Catch::Contains("model.top_mlp: needs at least one layer"));
  dlrm.top_mlp = {1};
  dlrm.dense_features = 0;
  CHECK_THAT(error_of(dlrm), Catch::Contains("model.bottom_mlp: must be absent without dense features"));
  dlrm.bottom_mlp = {};
  dlrm.tables = 1;
  CHECK_THAT(error_of(dlrm), Catch::Contains("without dense features needs at least 2 tables"));
  dlrm.tables = 2;
  CHECK(Model::Create(dlrm, backend.get()).ok());
  ModelSpec dcn = RandomSpec(config::ModelKind::kDcn, 1);
  dcn.cross_layers = 0;
  CHECK_THAT(error_of(dcn), Catch::Contains("model.cross_layers"));
  ModelSpec wide = RandomSpec(config::ModelKind::kWideDeep, 1);
  wide.embedding_dim = 0;
  CHECK_THAT(error_of(wide), Catch::Contains("model.embedding_dim"));
  wide.embedding_dim = 4;
  wide.dense_features = 0;
  wide.tables = 0;
  CHECK_THAT(error_of(wide), Catch::Contains("no input"));
  CHECK_FALSE(Model::Create(RandomSpec(config::ModelKind::kDeepFm, 1), nullptr).ok());
}

TEST_CASE("MLP FLOPs count the GEMMs issued", "[models]") {
  ModelSpec s;
  s.kind = config::ModelKind::kDlrm;
  s.dense_features = 13;
  s.tables = 26;
  s.embedding_dim = 128;
  s.bottom_mlp = {512, 256, 128};
  s.top_mlp = {1024, 1024, 512, 256, 1};
  const double bottom = 2 * 2.0 * 13 * 512 + 3 * 2.0 * (512 * 256 + 256 * 128);
  const double top = 3 * 2.0 * (479 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1);
  CHECK(MlpFlopsPerSample(s) == Approx(bottom + top + 2.0 * 26 * 26 * 128));
  // Without dense features: no bottom MLP, and the top MLP over 26·25/2 = 325 pairs.
  ModelSpec no_dense = s;
  no_dense.dense_features = 0;
  no_dense.bottom_mlp = {};
  const double top_pairs = 3 * 2.0 * (325 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1);
  CHECK(MlpFlopsPerSample(no_dense) == Approx(top_pairs + 2.0 * 26 * 26 * 128));
  s.kind = config::ModelKind::kDcn;
  s.deep_mlp = {64, 1};
  CHECK(MlpFlopsPerSample(s) == Approx(3 * 2.0 * (13 + 26 * 128) * 64));
}

TEST_CASE("MlpLayerShapes lists the GEMM layers of each model, in order", "[models]") {
  using Shapes = std::vector<std::pair<int, int>>;
  ModelSpec s;
  s.tables = 26;
  s.dense_features = 13;
  s.embedding_dim = 16;
  s.bottom_mlp = {64, 16};
  s.top_mlp = {32, 1};
  // DLRM: the bottom MLP, then the top over [z, 27·26/2 pairs] = 16 + 351.
  CHECK(MlpLayerShapes(s) == Shapes{{13, 64}, {64, 16}, {367, 32}, {32, 1}});
  ModelSpec no_dense = s;
  no_dense.dense_features = 0;
  no_dense.bottom_mlp = {};
  CHECK(MlpLayerShapes(no_dense) == Shapes{{325, 32}, {32, 1}});  // 26·25/2 pairs
  s.deep_mlp = {64, 8, 1};
  const int x0 = 13 + 26 * 16;
  for (auto kind : {config::ModelKind::kWideDeep, config::ModelKind::kDeepFm}) {
    s.kind = kind;
    CHECK(MlpLayerShapes(s) == Shapes{{x0, 64}, {64, 8}, {8, 1}});
  }
  s.kind = config::ModelKind::kDcn;  // the hidden layers only: the final layer is DcnLogits
  CHECK(MlpLayerShapes(s) == Shapes{{x0, 64}, {64, 8}});
  s.deep_mlp = {1};
  CHECK(MlpLayerShapes(s).empty());
}

}  // namespace actorrec::models
