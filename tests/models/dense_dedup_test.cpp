// DLRM's bottom MLP over a slice's distinct dense rows (SliceView::dense_of:
// a dedup group with dense = true) against the same model over every
// sample's row: bitwise equal when every row is distinct, and equal up to
// the order of the weight gradients' sums when rows repeat.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/cpu_backend.hpp"
#include "models/model.hpp"
#include "random_inputs.hpp"

namespace actorrec::models {
namespace {

ModelSpec DlrmSpec() {
  ModelSpec spec;
  spec.kind = config::ModelKind::kDlrm;
  spec.dense_features = 5;
  spec.tables = 3;
  spec.embedding_dim = 8;
  spec.bottom_mlp = {16, 8};
  spec.top_mlp = {8, 1};
  return spec;
}

struct Pass {
  double loss = 0;
  std::vector<float> logits, grads, pooled_grad;
};

Pass Run(Model& m, const SliceView& view, const std::vector<float>& pooled) {
  Pass p;
  p.pooled_grad.resize(pooled.size());
  m.Forward(view, pooled.data());
  p.logits.assign(m.logits(), m.logits() + view.samples);
  p.loss = m.Backward(view, pooled.data(), p.pooled_grad.data(), 0.125f);
  p.grads.assign(m.grads().begin(), m.grads().end());
  return p;
}

double MaxRelative(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max({std::fabs(double(a[i])), std::fabs(double(b[i])), 1e-3});
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / scale);
  }
  return worst;
}

}  // namespace

TEST_CASE("only DLRM with a bottom MLP computes over distinct dense rows", "[models][dedup]") {
  auto backend = gpu::MakeCpuBackend();
  ModelSpec spec = DlrmSpec();
  CHECK(Model::Create(spec, backend.get()).value()->DedupsDense());
  spec.dense_features = 0;
  spec.bottom_mlp.clear();
  CHECK_FALSE(Model::Create(spec, backend.get()).value()->DedupsDense());
  spec = DlrmSpec();
  spec.kind = config::ModelKind::kWideDeep;
  spec.deep_mlp = {8, 1};
  CHECK_FALSE(Model::Create(spec, backend.get()).value()->DedupsDense());
}

TEST_CASE("DLRM over distinct dense rows with every row distinct equals DLRM per sample bitwise", "[models][dedup]") {
  auto backend = gpu::MakeCpuBackend();
  auto a = Model::Create(DlrmSpec(), backend.get()).value();
  auto b = Model::Create(DlrmSpec(), backend.get()).value();
  a->Initialize(3);
  b->Initialize(3);
  const Inputs in = RandomInputs(*a, 37, 11);
  std::vector<uint32_t> identity(in.n);
  std::iota(identity.begin(), identity.end(), 0u);
  SliceView dedup = in.view();
  dedup.dense_of = identity.data();
  dedup.dense_rows = in.n;
  const Pass want = Run(*a, in.view(), in.pooled), got = Run(*b, dedup, in.pooled);
  CHECK(got.loss == want.loss);
  CHECK(got.logits == want.logits);
  CHECK(got.grads == want.grads);
  CHECK(got.pooled_grad == want.pooled_grad);
}

TEST_CASE("DLRM over distinct dense rows equals DLRM over the expanded rows up to summation order",
          "[models][dedup]") {
  auto backend = gpu::MakeCpuBackend();
  double worst = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto a = Model::Create(DlrmSpec(), backend.get()).value();
    auto b = Model::Create(DlrmSpec(), backend.get()).value();
    a->Initialize(seed);
    b->Initialize(seed);
    Inputs in = RandomInputs(*a, 64, seed);
    // Six distinct rows (each used), sessions of uneven length.
    const size_t rows = 6, F = DlrmSpec().dense_features;
    data::gen::Rng rng(seed);
    std::vector<uint32_t> dense_of(in.n);
    for (size_t i = 0; i < in.n; ++i) dense_of[i] = i < rows ? static_cast<uint32_t>(i) : static_cast<uint32_t>(rng.Below(rows));
    std::vector<float> distinct(in.dense.begin(), in.dense.begin() + rows * F), expanded(in.n * F);
    for (size_t i = 0; i < in.n; ++i) std::copy_n(distinct.data() + dense_of[i] * F, F, expanded.data() + i * F);
    SliceView full = in.view(), dedup = in.view();
    full.dense = expanded.data();
    dedup.dense = distinct.data();
    dedup.dense_of = dense_of.data();
    dedup.dense_rows = rows;
    const Pass want = Run(*a, full, in.pooled), got = Run(*b, dedup, in.pooled);
    INFO("seed " << seed);
    // The forward: the bottom MLP's rows are the same GEMM rows.
    CHECK(MaxRelative(got.logits, want.logits) < 1e-6);
    CHECK(MaxRelative(got.pooled_grad, want.pooled_grad) < 1e-6);
    CHECK(got.loss == Approx(want.loss).epsilon(1e-6));
    // The bottom MLP's weight gradients sum per distinct row first.
    const double rel = MaxRelative(got.grads, want.grads);
    worst = std::max(worst, rel);
    CHECK(rel < 1e-4);
  }
  WARN("dense gradients, max relative difference distinct rows vs every sample over 8 seeds: " << worst);
}

}  // namespace actorrec::models
