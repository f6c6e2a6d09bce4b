// The cache slots' copy kernels' per-element functions
// (gpu/cuda/slot_ops.hpp), run on the host over every element as the
// kernels do, equal the Backend's host ScatterSlots and GatherSlots.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/cpu_backend.hpp"
#include "gpu/cuda/slot_ops.hpp"

namespace actorrec::gpu {

TEST_CASE("the slot copy kernels' elements equal the backend's scatter and gather", "[gpu][cuda_ops]") {
  auto cpu = MakeCpuBackend();
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (size_t row_floats : {1, 5, 17, 33}) {
    for (size_t stride : {row_floats, row_floats + 3}) {
      const size_t slots_total = 64, n = 23;
      std::vector<uint32_t> slots(slots_total);
      for (uint32_t s = 0; s < slots_total; ++s) slots[s] = s;
      std::shuffle(slots.begin(), slots.end(), rng);
      slots.resize(n);  // distinct, scattered
      std::vector<float> staged(n * row_floats);
      for (float& x : staged) x = u(rng);
      std::vector<float> base(slots_total * stride);
      for (float& x : base) x = u(rng);

      std::vector<float> want = base, got = base;
      cpu->ScatterSlots(staged.data(), slots.data(), n, row_floats, want.data(), stride);
      for (size_t e = 0; e < n * row_floats; ++e) {
        cuda::ScatterSlotElement(staged.data(), slots.data(), row_floats, got.data(), stride, e);
      }
      INFO("row_floats " << row_floats << ", stride " << stride);
      CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);

      std::vector<float> gw(n * row_floats), gg(n * row_floats);
      cpu->GatherSlots(base.data(), stride, slots.data(), n, row_floats, gw.data());
      for (size_t e = 0; e < n * row_floats; ++e) {
        cuda::GatherSlotElement(base.data(), stride, slots.data(), row_floats, gg.data(), e);
      }
      CHECK(std::memcmp(gw.data(), gg.data(), gw.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("the CUDA GatherRows element equals the host's row gather", "[gpu][cuda_ops][dedup]") {
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (size_t width : {1, 7, 32}) {
    const size_t groups = 9, n = 41, src_stride = width + 2, out_stride = width * 3 + 1;
    std::vector<uint32_t> index(n);
    for (uint32_t& i : index) i = static_cast<uint32_t>(rng() % groups);
    std::vector<float> src(groups * src_stride);
    for (float& x : src) x = u(rng);
    std::vector<float> want(n * out_stride, 5.0f), got = want;
    HostGatherRows(src.data(), src_stride, width, index.data(), n, want.data(), out_stride);
    for (size_t e = 0; e < n * width; ++e) {
      cuda::GatherRowElement(src.data(), src_stride, index.data(), width, got.data(), out_stride, e);
    }
    INFO("width " << width);
    CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
  }
}

}  // namespace actorrec::gpu
