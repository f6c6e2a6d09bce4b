// The CUDA pooling kernels' per-element work (gpu/cuda/bag_ops.hpp), run on
// the host over every element as the kernels run it on the device, against
// the CPU backend: bitwise equal for both poolings. No GPU needed; the unit
// tests build with -std=c++20 (ISO: GCC contracts no FMA) for a target
// without FMA, so the host arithmetic rounds as the device's cuda::Mul/Add.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gpu/cpu_backend.hpp"
#include "gpu/cuda/bag_ops.hpp"
#include "tests/gpu/backend_cases.hpp"

namespace actorrec::gpu {
namespace {

// What bag_kernels.cu computes, one element at a time.
std::vector<float> KernelPool(const std::vector<float>& rows, size_t stride, size_t width, const Bags& b,
                              Pooling pooling, size_t out_stride) {
  const size_t samples = b.offsets.size() - 1;
  std::vector<float> out(samples * out_stride, 7.0f);
  for (size_t i = 0; i < samples; ++i) {
    for (size_t j = 0; j < width; ++j) {
      out[i * out_stride + j] = cuda::PoolElement(rows.data(), stride, b.unique_slots.data(), b.inverse.data(),
                                                  b.offsets[i], b.offsets[i + 1], j, pooling == Pooling::kMean);
    }
  }
  return out;
}

std::vector<float> KernelBagGrad(const std::vector<float>& g, size_t in_stride, size_t width, const Bags& b,
                                 Pooling pooling) {
  cuda::BagCsr csr;
  cuda::BuildBagCsr(b.inverse.data(), b.offsets.data(), b.offsets.size() - 1, b.unique_slots.size(), &csr);
  std::vector<float> grad(b.unique_slots.size() * width, 3.0f);
  for (size_t u = 0; u < b.unique_slots.size(); ++u) {
    for (size_t j = 0; j < width; ++j) {
      grad[u * width + j] = cuda::BagGradElement(g.data(), in_stride, b.offsets.data(), csr.sample_of.data(),
                                                 csr.row_start[u], csr.row_start[u + 1], j, pooling == Pooling::kMean);
    }
  }
  return grad;
}

}  // namespace

TEST_CASE("The CUDA pooling kernels' element functions equal the CPU backend bitwise", "[gpu][cuda]") {
  auto cpu = MakeCpuBackend();
  const size_t widths[] = {1, 7, 16, 33, 128};
  int checked = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    data::gen::Rng rng(seed);
    const bool skewed = seed % 2 == 0;
    const BagCase c = MakeBagCase(rng, widths[seed % 5], 1 + rng.Below(60), 1 + rng.Below(12), 1 + rng.Below(60), skewed);
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
      INFO("seed " << seed << " width " << c.width << (skewed ? " skewed" : "") << " mean "
                   << (pooling == Pooling::kMean));
      std::vector<float> want(c.samples * c.out_stride, 7.0f);
      cpu->PoolBySlot(c.rows.data(), c.stride, c.width, c.bags.view(), pooling, want.data(), c.out_stride);
      CHECK(SameBits(KernelPool(c.rows, c.stride, c.width, c.bags, pooling, c.out_stride), want));

      std::vector<float> want_grad(c.unique * c.width, 3.0f);
      cpu->BagGradToUnique(c.grad.data(), c.in_stride, c.width, c.bags.view(), pooling, want_grad.data());
      CHECK(SameBits(KernelBagGrad(c.grad, c.in_stride, c.width, c.bags, pooling), want_grad));
      ++checked;
    }
  }
  CHECK(checked == 400);
}

TEST_CASE("The CUDA element functions keep signed zeros as the CPU backend does", "[gpu][cuda]") {
  const std::vector<float> rows{-0.0f, 1.0f, 2.0f, -0.0f};  // two rows of width 2
  Bags bags;
  bags.unique_slots = {0, 1, 1};  // unique row 2 is used by no position
  bags.inverse = {0, 0, 1};
  bags.offsets = {0, 1, 1, 3};  // bag {row 0}, an empty bag, bag {row 0, row 1}
  auto cpu = MakeCpuBackend();
  for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
    std::vector<float> want(6, 9.0f);
    cpu->PoolBySlot(rows.data(), 2, 2, bags.view(), pooling, want.data(), 2);
    const std::vector<float> got = KernelPool(rows, 2, 2, bags, pooling, 2);
    CHECK(SameBits(got, want));
    CHECK(std::signbit(got[0]));       // a one-row bag is that row: -0 stays -0
    CHECK_FALSE(std::signbit(got[2]));  // an empty bag is +0

    const std::vector<float> g{1.0f, -0.0f, 5.0f, 5.0f, -0.0f, 2.0f};
    std::vector<float> want_grad(6, 9.0f);
    cpu->BagGradToUnique(g.data(), 2, 2, bags.view(), pooling, want_grad.data());
    const std::vector<float> grad = KernelBagGrad(g, 2, 2, bags, pooling);
    CHECK(SameBits(grad, want_grad));
    CHECK(std::signbit(grad[4]));  // a row no position uses: -0
  }
}

TEST_CASE("BuildBagCsr lists each unique row's positions in ascending order", "[gpu][cuda]") {
  Bags bags;
  bags.unique_slots = {5, 6, 7};
  bags.inverse = {2, 0, 2, 2, 0};
  bags.offsets = {0, 2, 2, 5};
  cuda::BagCsr csr;
  cuda::BuildBagCsr(bags.inverse.data(), bags.offsets.data(), 3, 3, &csr);
  CHECK(csr.row_start == std::vector<uint32_t>{0, 2, 2, 5});
  CHECK(csr.sample_of == std::vector<uint32_t>{0, 2, 0, 2, 2});
}

TEST_CASE("The CUDA SumRowsByIndex's CSR and element equal the host's ascending sums bitwise", "[gpu][cuda][dedup]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    data::gen::Rng rng(seed);
    const size_t width = 1 + rng.Below(33), groups = 1 + rng.Below(12), n = rng.Below(200);
    const size_t in_stride = width + rng.Below(3), out_stride = width + rng.Below(3);
    INFO("seed " << seed << " width " << width << " groups " << groups << " n " << n);
    std::vector<uint32_t> index(n);
    for (uint32_t& i : index) i = static_cast<uint32_t>(rng.Below(groups));
    std::vector<float> in(n * in_stride);
    for (float& x : in) x = RandomValue(rng);
    std::vector<float> want(groups * out_stride, 7.0f), got = want;
    HostSumRowsByIndex(in.data(), in_stride, width, index.data(), n, groups, want.data(), out_stride);
    // What bag_kernels.cu's SumRowsByIndexKernel computes, element by element.
    cuda::BagCsr csr;
    cuda::BuildBagCsr(index.data(), nullptr, n, groups, &csr);
    for (size_t u = 0; u < groups; ++u) {
      for (size_t j = 0; j < width; ++j) {
        got[u * out_stride + j] = cuda::BagGradElement(in.data(), in_stride, nullptr, csr.sample_of.data(),
                                                       csr.row_start[u], csr.row_start[u + 1], j, false);
      }
    }
    CHECK(SameBits(want, got));
  }
}

TEST_CASE("BuildBagCsr without offsets lists each group's samples in ascending order", "[gpu][cuda][dedup]") {
  const std::vector<uint32_t> index = {2, 0, 2, 2, 0, 3};
  cuda::BagCsr csr;
  cuda::BuildBagCsr(index.data(), nullptr, index.size(), 4, &csr);
  CHECK(csr.row_start == std::vector<uint32_t>{0, 2, 2, 5, 6});
  CHECK(csr.sample_of == std::vector<uint32_t>{1, 4, 0, 2, 3, 5});
}

}  // namespace actorrec::gpu
