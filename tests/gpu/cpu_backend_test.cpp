// The CPU backend against straightforward reference loops: GEMM within
// rounding for every library this build has, pooling and its backward
// bitwise (their summation order is part of the contract that makes cache
// modes bit-identical).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/cpu_backend.hpp"
#include "tests/gpu/backend_cases.hpp"

namespace actorrec::gpu {
namespace {

std::vector<CpuGemmLibrary> Libraries() {
  std::vector<CpuGemmLibrary> libs{CpuGemmLibrary::kOpenBlas};
  if (CpuBackendHasOneDnn()) libs.push_back(CpuGemmLibrary::kOneDnn);
  return libs;
}

std::unique_ptr<Backend> Make(CpuGemmLibrary lib) {
  auto be = MakeCpuBackend(lib);
  REQUIRE(be.ok());
  return std::move(*be);
}

// One GEMM problem (padded, beta == 0 with NaNs in C) checked against a
// double-precision triple loop.
void CheckGemm(Backend& be, data::gen::Rng& rng, bool ta, bool tb, int m, int n, int k, float alpha, float beta) {
  const GemmCase g = MakeGemmCase(rng, ta, tb, m, n, k, beta);
  std::vector<float> c = g.c;
  g.Run(be, alpha, beta, c.data());
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int p = 0; p < k; ++p) s += double(g.A(i, p)) * g.B(p, j), mag += std::fabs(double(g.A(i, p)) * g.B(p, j));
      const double want = alpha * s + (beta == 0.0f ? 0.0 : beta * double(g.c[size_t(i) * g.ldc + j]));
      INFO(be.name() << " ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " at " << i << ","
                     << j);
      REQUIRE(std::fabs(c[size_t(i) * g.ldc + j] - want) <= 1e-5 * (mag + 1.0));
    }
  }
}

// The contracts of backend.hpp written as the plainest loops.
std::vector<float> ReferencePool(const std::vector<float>& rows, size_t stride, size_t width, const Bags& b,
                                 Pooling pooling, size_t out_stride) {
  const size_t samples = b.offsets.size() - 1;
  std::vector<float> out(samples * out_stride, 7.0f);
  for (size_t i = 0; i < samples; ++i) {
    const uint32_t len = b.offsets[i + 1] - b.offsets[i];
    for (size_t j = 0; j < width; ++j) {
      float s = 0.0f;
      for (uint32_t p = b.offsets[i]; p < b.offsets[i + 1]; ++p) {
        const float v = rows[b.unique_slots[b.inverse[p]] * stride + j];
        s = p == b.offsets[i] ? v : s + v;
      }
      if (pooling == Pooling::kMean && len > 0) s = s * (1.0f / static_cast<float>(len));
      out[i * out_stride + j] = s;
    }
  }
  return out;
}

std::vector<float> ReferenceBagGrad(const std::vector<float>& g, size_t in_stride, size_t width, const Bags& b,
                                    Pooling pooling) {
  std::vector<float> want(b.unique_slots.size() * width, -0.0f);
  for (size_t u = 0; u < b.unique_slots.size(); ++u) {
    for (size_t p = 0; p < b.inverse.size(); ++p) {  // every position, ascending
      if (b.inverse[p] != u) continue;
      size_t i = 0;
      while (b.offsets[i + 1] <= p) ++i;
      const float scale = 1.0f / static_cast<float>(b.offsets[i + 1] - b.offsets[i]);
      for (size_t j = 0; j < width; ++j) {
        const float c = pooling == Pooling::kMean ? g[i * in_stride + j] * scale : g[i * in_stride + j];
        want[u * width + j] = want[u * width + j] + c;
      }
    }
  }
  return want;
}

}  // namespace

TEST_CASE("Gemm matches the triple loop for every transpose combination and odd shapes", "[gpu]") {
  for (CpuGemmLibrary lib : Libraries()) {
    auto be = Make(lib);
    data::gen::Rng rng(5);
    const int shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {1, 17, 33}, {33, 1, 17}, {17, 33, 1}, {13, 64, 129}, {64, 16, 13}};
    for (auto [m, n, k] : shapes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          CheckGemm(*be, rng, ta, tb, m, n, k, 1.0f, 0.0f);
          CheckGemm(*be, rng, ta, tb, m, n, k, 2.0f, 0.5f);
        }
      }
    }
    for (int trial = 0; trial < 30; ++trial) {
      const int m = 1 + static_cast<int>(rng.Below(70)), n = 1 + static_cast<int>(rng.Below(70)),
                k = 1 + static_cast<int>(rng.Below(70));
      CheckGemm(*be, rng, rng.Below(2) == 1, rng.Below(2) == 1, m, n, k, rng.Below(2) ? 1.0f : -0.75f,
                rng.Below(2) ? 0.0f : 1.0f);
    }
  }
}

TEST_CASE("Gemm with k == 0 scales C by beta and m or n == 0 touches nothing", "[gpu]") {
  for (CpuGemmLibrary lib : Libraries()) CheckEmptyGemms(*Make(lib));
}

TEST_CASE("Gemm gives the same bits on every call and every thread", "[gpu]") {
  for (CpuGemmLibrary lib : Libraries()) {
    CheckGemmRepeats([lib] { return MakeCpuBackend(lib).value(); }, 256, 64, 257);
  }
}

TEST_CASE("PoolBySlot and BagGradToUnique equal the reference loops bitwise", "[gpu]") {
  auto be = MakeCpuBackend();
  const size_t widths[] = {4, 16, 17, 31, 32, 64, 128, 256};  // 16, 32, 64, 128: the fixed-width loops
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    data::gen::Rng rng(seed);
    const size_t width = seed % 4 == 0 ? 1 + rng.Below(40) : widths[rng.Below(8)];
    const size_t stride = width + rng.Below(5), out_stride = width + rng.Below(3);
    const size_t slots = 1 + rng.Below(60), unique = 1 + rng.Below(12), samples = 1 + rng.Below(40);
    std::vector<float> rows(slots * stride);
    for (float& x : rows) x = RandomValue(rng);
    rows[rng.Below(rows.size())] = -0.0f;
    const Bags bags = RandomBags(rng, slots, unique, samples);
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
      INFO("seed " << seed << " width " << width << " mean " << (pooling == Pooling::kMean));
      std::vector<float> out(samples * out_stride, 7.0f);
      be->PoolBySlot(rows.data(), stride, width, bags.view(), pooling, out.data(), out_stride);
      CHECK(SameBits(out, ReferencePool(rows, stride, width, bags, pooling, out_stride)));

      const size_t in_stride = width + rng.Below(3);
      std::vector<float> g(samples * in_stride);
      for (float& x : g) x = RandomValue(rng);
      std::vector<float> grad(unique * width, 3.0f);
      be->BagGradToUnique(g.data(), in_stride, width, bags.view(), pooling, grad.data());
      CHECK(SameBits(grad, ReferenceBagGrad(g, in_stride, width, bags, pooling)));
    }
  }
}

TEST_CASE("GatherRows copies rows by index and SumRowsByIndex sums them back in ascending order, bitwise",
          "[gpu][dedup]") {
  auto be = MakeCpuBackend();
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    data::gen::Rng rng(seed);
    const size_t width = 1 + rng.Below(40), groups = 1 + rng.Below(10), n = 1 + rng.Below(50);
    const size_t src_stride = width + rng.Below(3), out_stride = width + rng.Below(3);
    INFO("seed " << seed << " width " << width);
    std::vector<uint32_t> index(n);
    for (uint32_t& i : index) i = static_cast<uint32_t>(rng.Below(groups));
    std::vector<float> src(groups * src_stride);
    for (float& x : src) x = RandomValue(rng);
    std::vector<float> gathered(n * out_stride, 7.0f), want = gathered;
    be->GatherRows(src.data(), src_stride, width, index.data(), n, gathered.data(), out_stride);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(want.data() + i * out_stride, src.data() + size_t{index[i]} * src_stride, width * sizeof(float));
    }
    CHECK(SameBits(gathered, want));

    // Per group: its rows added one by one in ascending i, from -0.
    std::vector<float> in(n * out_stride);
    for (float& x : in) x = RandomValue(rng);
    std::vector<float> sums(groups * src_stride, 3.0f), expected = sums;
    be->SumRowsByIndex(in.data(), out_stride, width, index.data(), n, groups, sums.data(), src_stride);
    for (size_t u = 0; u < groups; ++u) {
      for (size_t j = 0; j < width; ++j) {
        float acc = -0.0f;
        for (size_t i = 0; i < n; ++i) {
          if (index[i] == u) acc += in[i * out_stride + j];
        }
        expected[u * src_stride + j] = acc;
      }
    }
    CHECK(SameBits(sums, expected));
  }
}

TEST_CASE("Pooling keeps signed zeros: one-row bags copy the row, unused rows get -0", "[gpu]") {
  auto be = MakeCpuBackend();
  const std::vector<float> rows{-0.0f, 1.0f, 2.0f, -0.0f};  // two rows of width 2
  Bags bags;
  bags.unique_slots = {0, 1, 1};  // unique row 2 is used by no position
  bags.inverse = {0, 0, 1};
  bags.offsets = {0, 1, 1, 3};  // bag {row 0}, an empty bag, bag {row 0, row 1}
  std::vector<float> out(6, 9.0f);
  be->PoolBySlot(rows.data(), 2, 2, bags.view(), Pooling::kSum, out.data(), 2);
  CHECK(std::signbit(out[0]));  // -0 itself, not +0 + -0
  CHECK(out[1] == 1.0f);
  CHECK(out[2] == 0.0f);
  CHECK_FALSE(std::signbit(out[2]));  // an empty bag pools to +0
  CHECK(out[4] == 2.0f);
  CHECK(out[5] == 1.0f);

  const std::vector<float> g{1.0f, -0.0f, 5.0f, 5.0f, -0.0f, 2.0f};
  std::vector<float> grad(6, 9.0f);
  be->BagGradToUnique(g.data(), 2, 2, bags.view(), Pooling::kSum, grad.data());
  CHECK(grad[0] == 1.0f);
  CHECK(grad[1] == 2.0f);
  CHECK(std::signbit(grad[2]));  // -0 + -0 stays -0
  CHECK(grad[3] == 2.0f);
  CHECK(std::signbit(grad[4]));
  CHECK(std::signbit(grad[5]));
}

TEST_CASE("The CPU backend names its sgemm library", "[gpu]") {
  CHECK(MakeCpuBackend()->name().find(CpuBackendHasOneDnn() ? "oneDNN" : "OpenBLAS") != std::string::npos);
  auto openblas = MakeCpuBackend(CpuGemmLibrary::kOpenBlas);
  REQUIRE(openblas.ok());
  CHECK((*openblas)->name().find("OpenBLAS") != std::string::npos);
  if (!CpuBackendHasOneDnn()) CHECK(MakeCpuBackend(CpuGemmLibrary::kOneDnn).status().code() == Status::Code::kNotSupported);
}

}  // namespace actorrec::gpu
