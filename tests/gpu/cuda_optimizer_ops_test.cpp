// The per-element and per-row functions of the CUDA optimizer kernels
// (gpu/cuda/optimizer_ops.hpp), compiled by g++ and compared bit for bit with
// models::DenseOptimizer::Step and models::RowOptimizer::Apply over many
// steps, seeds, widths and settings, parameters and state alike; lazy Adam
// with and without the host's table of bias corrections.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "cuda_ops_values.hpp"
#include "gpu/cuda/optimizer_ops.hpp"
#include "models/optimizers.hpp"

namespace actorrec::gpu::cuda {
namespace {

using testing::BitwiseDiff;
using testing::Mix;
using testing::Values;

models::OptimizerSettings SettingsOf(uint64_t seed) {
  models::OptimizerSettings s;
  const float lrs[] = {0.01f, 0.5f, 1e-4f, 0.1f};
  const float eps[] = {1e-8f, 0.0f, 1e-6f, 1e-10f};
  const float beta1[] = {0.9f, 0.8f, 0.5f, 0.99f};
  const float beta2[] = {0.999f, 0.99f, 0.9f, 0.9999f};
  const float acc[] = {0.0f, 0.1f, 1e-3f, 0.0f};
  s.lr = lrs[seed % 4];
  s.eps = eps[(seed / 4) % 4];
  s.beta1 = beta1[seed % 4];
  s.beta2 = beta2[(seed / 2) % 4];
  s.initial_accumulator = acc[(seed / 3) % 4];
  return s;
}

AdamSettings AdamOf(const models::OptimizerSettings& s) { return {s.lr, s.beta1, s.beta2, s.eps}; }

// Gradients of one step: mostly normal, skewed or with edges; some steps all
// zero (a row that took part with no gradient).
std::vector<float> Grads(Values& v, size_t n, int step) {
  const Mix mixes[] = {Mix::kNormal, Mix::kSkewed, Mix::kEdges};
  std::vector<float> g = v.Vector(n, mixes[step % 3]);
  for (float& x : g) {
    if (std::fabs(x) > 1e6f) x = x / 1e12f;  // keep g² finite: the CPU's NaNs need no comparing
  }
  if (step % 7 == 6) std::fill(g.begin(), g.end(), 0.0f);
  return g;
}

}  // namespace

TEST_CASE("the dense optimizer functions give DenseOptimizer's bits, step after step", "[gpu][cuda_ops]") {
  for (config::DenseOptimizer kind :
       {config::DenseOptimizer::kSgd, config::DenseOptimizer::kAdagrad, config::DenseOptimizer::kAdam}) {
    for (uint64_t seed = 1; seed <= 16; ++seed) {
      Values v(seed * 11 + static_cast<uint64_t>(kind));
      const size_t n = 1 + v.Below(300);
      const models::OptimizerSettings s = SettingsOf(seed);
      models::DenseOptimizer cpu(kind, s, n);
      std::vector<float> p = v.Vector(n, Mix::kNormal), hd_p = p;
      std::vector<float> state(cpu.state().begin(), cpu.state().end());  // accumulators, or m, v, step
      for (int step = 0; step < 25; ++step) {
        const std::vector<float> g = Grads(v, n, step);
        cpu.Step(p, g);
        switch (kind) {
          case config::DenseOptimizer::kSgd:
            for (size_t i = 0; i < n; ++i) hd_p[i] = SgdUpdate(hd_p[i], g[i], s.lr);
            break;
          case config::DenseOptimizer::kAdagrad:
            for (size_t i = 0; i < n; ++i) AdagradUpdate(&hd_p[i], &state[i], g[i], s.lr, s.eps);
            break;
          case config::DenseOptimizer::kAdam: {
            float& count = state[2 * n];
            count = Add(count, 1.0f);  // the caller's step count, then the corrections on the host
            const float c1 = AdamCorrection(s.beta1, count), c2 = AdamCorrection(s.beta2, count);
            for (size_t i = 0; i < n; ++i) AdamUpdate(&hd_p[i], &state[i], &state[n + i], g[i], AdamOf(s), c1, c2);
            break;
          }
        }
        INFO(static_cast<int>(kind) << " seed " << seed << ", n " << n << ", step " << step);
        REQUIRE(BitwiseDiff(p, hd_p) == "");
        REQUIRE(BitwiseDiff(std::vector<float>(cpu.state().begin(), cpu.state().end()), state) == "");
      }
    }
  }
}

namespace {

// One row kind, `rows` rows of `width`, `steps` updates each (row r skips
// the steps where (step + r) % 3 == 2, so lazy Adam's counts differ per row):
// RowOptimizer::Apply against the functions, on a strided layout. For Adam,
// table_count picks the host's table (0: none, powf on both sides here).
void CheckRows(config::SparseOptimizer kind, uint64_t seed, uint32_t width, uint32_t table_count) {
  Values v(seed * 101 + width + static_cast<uint64_t>(kind) * 7);
  const models::OptimizerSettings s = SettingsOf(seed);
  const models::RowOptimizer cpu(kind, s, width);
  const size_t rows = 5, stride = cpu.row_floats() + 3;  // padding between rows stays untouched
  std::vector<float> table(2 * size_t{table_count});
  FillAdamCorrections(s.beta1, s.beta2, table_count, table.data());
  std::vector<float> mem(rows * stride, 42.0f);
  for (size_t r = 0; r < rows; ++r) {
    for (uint32_t j = 0; j < width; ++j) mem[r * stride + j] = v.Next(Mix::kNormal);
    cpu.InitState(mem.data() + r * stride + width);
  }
  std::vector<float> hd = mem;
  for (int step = 0; step < 40; ++step) {
    for (size_t r = 0; r < rows; ++r) {
      if ((step + static_cast<int>(r)) % 3 == 2) continue;
      const std::vector<float> g = Grads(v, width, step + static_cast<int>(r));
      cpu.Apply(mem.data() + r * stride, g.data());
      float* row = hd.data() + r * stride;
      switch (kind) {
        case config::SparseOptimizer::kSgd:
          for (uint32_t j = 0; j < width; ++j) row[j] = SgdUpdate(row[j], g[j], s.lr);
          break;
        case config::SparseOptimizer::kAdagrad:
          for (uint32_t j = 0; j < width; ++j) AdagradUpdate(row + j, row + width + j, g[j], s.lr, s.eps);
          break;
        case config::SparseOptimizer::kRowwiseAdagrad: RowwiseAdagradRow(row, g.data(), width, s.lr, s.eps); break;
        case config::SparseOptimizer::kAdam:
          RowAdamRow(row, g.data(), width, AdamOf(s), table_count ? table.data() : nullptr, table_count);
          break;
      }
    }
    INFO(static_cast<int>(kind) << " seed " << seed << ", width " << width << ", table " << table_count
                                << ", step " << step);
    REQUIRE(BitwiseDiff(mem, hd) == "");
  }
}

}  // namespace

TEST_CASE("the row optimizer functions give RowOptimizer::Apply's bits, rows with their state", "[gpu][cuda_ops]") {
  for (config::SparseOptimizer kind : {config::SparseOptimizer::kSgd, config::SparseOptimizer::kAdagrad,
                                       config::SparseOptimizer::kRowwiseAdagrad, config::SparseOptimizer::kAdam}) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      for (uint32_t width : {1u, 3u, 8u, 16u, 17u, 33u, 129u}) {
        CheckRows(kind, seed, width, 0);
        // Lazy Adam from the table: covering every step, and ending halfway
        // (the later steps fall back to Pow).
        if (kind == config::SparseOptimizer::kAdam) {
          CheckRows(kind, seed, width, 64);
          CheckRows(kind, seed, width, 13);
        }
      }
    }
  }
}

TEST_CASE("lazy Adam reads the table only for a whole step count inside it", "[gpu][cuda_ops]") {
  const AdamSettings s{0.1f, 0.9f, 0.999f, 1e-8f};
  // A table of poison: a row that reads it ends NaN.
  const std::vector<float> poison(8, std::numeric_limits<float>::quiet_NaN());
  const float g[2] = {0.5f, -0.25f};
  // The step count before the update, and whether the update reads the table.
  const std::pair<float, bool> cases[] = {{0.0f, true},     {3.0f, true},    {4.0f, false},     {1.5f, false},
                                          {1e30f, false},   {16777216.0f, false},
                                          {std::numeric_limits<float>::infinity(), false}};
  for (auto [step, reads] : cases) {
    float row[2 + 2 + 2 + 1] = {1.0f, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f, step};
    RowAdamRow(row, g, 2, s, poison.data(), 4);
    INFO("step count before " << step);
    CHECK(std::isnan(row[0]) == reads);
  }
}

TEST_CASE("FillAdamCorrections holds 1 - beta^t for t = 1 … count", "[gpu][cuda_ops]") {
  std::vector<float> table(2 * 300);
  FillAdamCorrections(0.9f, 0.999f, 300, table.data());
  for (uint32_t t = 1; t <= 300; ++t) {
    CHECK(table[2 * (t - 1)] == 1.0f - std::pow(0.9f, static_cast<float>(t)));
    CHECK(table[2 * (t - 1) + 1] == 1.0f - std::pow(0.999f, static_cast<float>(t)));
  }
}

}  // namespace actorrec::gpu::cuda
