// Dense and row optimizers: hand-computed updates, the row layout, lazy
// Adam's per-row step count, row vs dense agreement over many seeds, and
// determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "data/gen/random.hpp"
#include "models/optimizers.hpp"

namespace actorrec::models {
namespace {

OptimizerSettings Settings(float lr) {
  OptimizerSettings s;
  s.lr = lr;
  s.eps = 0.0f;
  return s;
}

}  // namespace

TEST_CASE("row optimizers update as computed by hand, state inside the row", "[models]") {
  const OptimizerSettings s = Settings(0.5f);
  const float g[2] = {2.0f, -1.0f};
  SECTION("sgd") {
    RowOptimizer sgd(config::SparseOptimizer::kSgd, s, 2);
    REQUIRE(sgd.row_floats() == 2);
    float row[2] = {1.0f, 1.0f};
    sgd.Apply(row, g);
    CHECK(row[0] == 0.0f);
    CHECK(row[1] == 1.5f);
  }
  SECTION("adagrad: per-element accumulators") {
    OptimizerSettings a = s;
    a.initial_accumulator = 0.25f;
    RowOptimizer adagrad(config::SparseOptimizer::kAdagrad, a, 2);
    REQUIRE(adagrad.row_floats() == 4);
    float row[4] = {1.0f, 1.0f};
    adagrad.InitState(row + 2);
    CHECK(row[2] == 0.25f);
    adagrad.Apply(row, g);  // acc = 0.25 + g²
    CHECK(row[2] == 4.25f);
    CHECK(row[3] == 1.25f);
    CHECK(row[0] == Approx(1.0 - 0.5 * 2.0 / std::sqrt(4.25)));
    CHECK(row[1] == Approx(1.0 + 0.5 * 1.0 / std::sqrt(1.25)));
  }
  SECTION("rowwise adagrad: one accumulator, the mean of g²") {
    RowOptimizer rowwise(config::SparseOptimizer::kRowwiseAdagrad, s, 2);
    REQUIRE(rowwise.row_floats() == 3);
    float row[3] = {1.0f, 1.0f};
    rowwise.InitState(row + 2);
    rowwise.Apply(row, g);  // acc = (4 + 1) / 2
    CHECK(row[2] == 2.5f);
    CHECK(row[0] == Approx(1.0 - 0.5 * 2.0 / std::sqrt(2.5)));
    CHECK(row[1] == Approx(1.0 + 0.5 * 1.0 / std::sqrt(2.5)));
    rowwise.Apply(row, g);
    CHECK(row[2] == 5.0f);
  }
  SECTION("adam: two steps with bias correction from the row's own count") {
    OptimizerSettings a = s;
    a.eps = 1e-8f;
    RowOptimizer adam(config::SparseOptimizer::kAdam, a, 2);
    REQUIRE(adam.row_floats() == 7);
    float row[7] = {1.0f, 1.0f, 9, 9, 9, 9, 9};
    adam.InitState(row + 2);
    CHECK(std::all_of(row + 2, row + 7, [](float x) { return x == 0.0f; }));
    adam.Apply(row, g);  // the first step moves each weight by lr · sign(g)
    CHECK(row[0] == Approx(0.5f));
    CHECK(row[1] == Approx(1.5f));
    CHECK(row[2] == Approx(0.2f));      // m = 0.1 g
    CHECK(row[4] == Approx(0.004f).epsilon(1e-4));  // v = (1 - β₂) g², β₂ rounded to float
    CHECK(row[6] == 1.0f);              // the row's step count
    const float g2[2] = {1.0f, 1.0f};
    adam.Apply(row, g2);
    const double m = 0.9 * 0.2 + 0.1 * 1.0, v = 0.999 * 0.004 + 0.001 * 1.0;
    const double update = 0.5 * (m / (1 - 0.81)) / (std::sqrt(v / (1 - 0.999 * 0.999)) + 1e-8);
    CHECK(row[0] == Approx(0.5 - update).epsilon(1e-4));
    CHECK(row[6] == 2.0f);
  }
}

TEST_CASE("dense optimizers update as computed by hand", "[models]") {
  std::vector<float> p = {1.0f, 1.0f};
  const std::vector<float> g = {2.0f, -1.0f};
  SECTION("sgd") {
    DenseOptimizer sgd(config::DenseOptimizer::kSgd, Settings(0.5f), 2);
    sgd.Step(p, g);
    CHECK(p == std::vector<float>{0.0f, 1.5f});
    CHECK(sgd.state().empty());
    CHECK(sgd.state_tensors().empty());
  }
  SECTION("adagrad") {
    DenseOptimizer adagrad(config::DenseOptimizer::kAdagrad, Settings(0.5f), 2);
    adagrad.Step(p, g);
    adagrad.Step(p, g);  // acc = 2 g²: second step lr · g / (√2 |g|)
    CHECK(p[0] == Approx(1.0 - 0.5 - 0.5 / std::sqrt(2.0)));
    CHECK(adagrad.state()[0] == 8.0f);
    REQUIRE(adagrad.state_tensors().size() == 1);
    CHECK(adagrad.state_tensors()[0].name == "adagrad.accumulator");
  }
  SECTION("adam keeps its step count as the last state float") {
    DenseOptimizer adam(config::DenseOptimizer::kAdam, Settings(0.5f), 2);
    adam.Step(p, g);
    CHECK(p[0] == Approx(0.5f));
    CHECK(p[1] == Approx(1.5f));
    REQUIRE(adam.state().size() == 5);
    CHECK(adam.state()[4] == 1.0f);
    const auto tensors = adam.state_tensors();
    REQUIRE(tensors.size() == 3);
    CHECK(tensors[2].name == "adam.step");
    CHECK(tensors[2].offset == 4);
    CHECK(tensors[1].offset == 2);
  }
}

TEST_CASE("row and dense optimizers agree when every element gets a gradient", "[models]") {
  const std::pair<config::SparseOptimizer, config::DenseOptimizer> pairs[] = {
      {config::SparseOptimizer::kSgd, config::DenseOptimizer::kSgd},
      {config::SparseOptimizer::kAdagrad, config::DenseOptimizer::kAdagrad},
      {config::SparseOptimizer::kAdam, config::DenseOptimizer::kAdam}};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (auto [row_kind, dense_kind] : pairs) {
      data::gen::Rng rng(seed);
      OptimizerSettings s;
      s.lr = 0.01f + static_cast<float>(rng.Uniform());
      s.initial_accumulator = 0.1f;
      const uint32_t width = 1 + static_cast<uint32_t>(rng.Below(20));
      RowOptimizer row_opt(row_kind, s, width);
      DenseOptimizer dense_opt(dense_kind, s, width);
      std::vector<float> row(row_opt.row_floats()), dense(width);
      for (uint32_t j = 0; j < width; ++j) row[j] = dense[j] = static_cast<float>(rng.Normal());
      row_opt.InitState(row.data() + width);
      for (int step = 0; step < 5; ++step) {
        std::vector<float> g(width);
        for (float& x : g) x = static_cast<float>(rng.Normal());
        row_opt.Apply(row.data(), g.data());
        dense_opt.Step(dense, g);
      }
      INFO("seed " << seed << " width " << width);
      CHECK(std::equal(dense.begin(), dense.end(), row.begin()));
    }
  }
}

TEST_CASE("lazy row Adam advances only the rows it updates", "[models]") {
  RowOptimizer adam(config::SparseOptimizer::kAdam, Settings(0.1f), 3);
  std::vector<float> a(adam.row_floats()), b(adam.row_floats());
  adam.InitState(a.data() + 3);
  adam.InitState(b.data() + 3);
  const float g[3] = {1.0f, 2.0f, 3.0f};
  for (int i = 0; i < 3; ++i) adam.Apply(a.data(), g);
  adam.Apply(b.data(), g);
  CHECK(a[9] == 3.0f);  // the step count, after 3 weights and 2·3 moments
  CHECK(b[9] == 1.0f);
  // A second row updated later makes the same first step as the first row did.
  std::vector<float> c(adam.row_floats());
  adam.InitState(c.data() + 3);
  adam.Apply(c.data(), g);
  CHECK(b == c);
}

TEST_CASE("settings come from [optimizer]", "[models]") {
  config::OptimizerConfig c;
  c.dense_lr = 0.5;
  c.sparse_lr = 0.25;
  c.beta1 = 0.8;
  c.eps = 1e-6;
  CHECK(DenseSettingsOf(c).lr == 0.5f);
  CHECK(SparseSettingsOf(c).lr == 0.25f);
  CHECK(SparseSettingsOf(c).beta1 == 0.8f);
  CHECK(DenseSettingsOf(c).eps == 1e-6f);
}

}  // namespace actorrec::models
