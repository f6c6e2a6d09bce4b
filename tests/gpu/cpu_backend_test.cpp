// The CPU backend against straightforward reference loops: GEMM within
// rounding, pooling and its backward bitwise (their summation order is part
// of the contract that makes cache modes bit-identical).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/cpu_backend.hpp"

namespace actorrec::gpu {

TEST_CASE("Gemm matches the triple loop for every transpose combination", "[gpu]") {
  auto be = MakeCpuBackend();
  data::gen::Rng rng(5);
  const int m = 7, n = 5, k = 3;
  std::vector<float> a(m * k), b(k * n);
  for (float& x : a) x = static_cast<float>(rng.Normal());
  for (float& x : b) x = static_cast<float>(rng.Normal());
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Store A (m×k) or Aᵀ (k×m), B (k×n) or Bᵀ (n×k).
      std::vector<float> as(a.size()), bs(b.size()), c(m * n, 1.0f);
      for (int i = 0; i < m; ++i)
        for (int p = 0; p < k; ++p) (ta ? as[p * m + i] : as[i * k + p]) = a[i * k + p];
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j) (tb ? bs[j * k + p] : bs[p * n + j]) = b[p * n + j];
      be->Gemm(ta, tb, m, n, k, 2.0f, as.data(), ta ? m : k, bs.data(), tb ? k : n, 0.5f, c.data(), n);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int p = 0; p < k; ++p) s += double(a[i * k + p]) * b[p * n + j];
          CHECK(c[i * n + j] == Approx(2.0 * s + 0.5).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("PoolBySlot and BagGradToUnique equal the reference loops bitwise", "[gpu]") {
  auto be = MakeCpuBackend();
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    data::gen::Rng rng(seed);
    const size_t width = 1 + rng.Below(20), stride = width + rng.Below(5), slots = 30, samples = 1 + rng.Below(40);
    std::vector<float> rows(slots * stride);
    for (float& x : rows) x = static_cast<float>(rng.Normal());
    std::vector<uint32_t> unique_slots, inverse, offsets{0};
    const size_t unique = 1 + rng.Below(10);
    for (size_t u = 0; u < unique; ++u) unique_slots.push_back(static_cast<uint32_t>(rng.Below(slots)));
    for (size_t i = 0; i < samples; ++i) {
      const size_t len = rng.Below(4);  // empty bags and repeats included
      for (size_t p = 0; p < len; ++p) inverse.push_back(static_cast<uint32_t>(rng.Below(unique)));
      offsets.push_back(static_cast<uint32_t>(inverse.size()));
    }
    SlotBags bags{unique_slots.data(), unique, inverse.data(), offsets.data(), samples};
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
      std::vector<float> out(samples * width), ref(samples * width);
      be->PoolBySlot(rows.data(), stride, width, bags, pooling, out.data(), width);
      for (size_t i = 0; i < samples; ++i) {
        for (size_t j = 0; j < width; ++j) {
          float s = 0.0f;
          const uint32_t len = offsets[i + 1] - offsets[i];
          for (uint32_t p = offsets[i]; p < offsets[i + 1]; ++p) {
            const float v = rows[unique_slots[inverse[p]] * stride + j];
            s = p == offsets[i] ? v : s + v;
          }
          if (pooling == Pooling::kMean && len > 0) s *= 1.0f / static_cast<float>(len);
          ref[i * width + j] = s;
        }
      }
      CHECK(out == ref);

      std::vector<float> g(samples * width);
      for (float& x : g) x = static_cast<float>(rng.Normal());
      std::vector<float> grad(unique * width), want(unique * width, -0.0f);
      be->BagGradToUnique(g.data(), width, width, bags, pooling, grad.data());
      for (size_t i = 0; i < samples; ++i) {
        const uint32_t len = offsets[i + 1] - offsets[i];
        for (uint32_t p = offsets[i]; p < offsets[i + 1]; ++p) {
          for (size_t j = 0; j < width; ++j) {
            const float c = pooling == Pooling::kMean ? g[i * width + j] * (1.0f / static_cast<float>(len)) : g[i * width + j];
            want[inverse[p] * width + j] += c;
          }
        }
      }
      CHECK(std::memcmp(grad.data(), want.data(), grad.size() * sizeof(float)) == 0);
    }
  }
}

}  // namespace actorrec::gpu
