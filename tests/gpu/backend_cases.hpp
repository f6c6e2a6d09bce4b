// Inputs for the tests of every backend (CPU, the CUDA element functions on
// the host, CUDA on a device): GEMM problems with padded leading dimensions,
// random and skewed bags (empty, one-row and long bags, rows repeated in a
// bag, unique rows no position uses, −0.0f values), and bitwise comparison.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

struct Bags {
  std::vector<uint32_t> unique_slots, inverse, offsets{0};
  SlotBags view() const {
    return {unique_slots.data(), unique_slots.size(), inverse.data(), offsets.data(), offsets.size() - 1};
  }
};

inline bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Random bags over `unique` rows of `slots` slots: empty bags, long bags and
// rows repeated in one bag all occur; some unique rows may be used by no
// position. skewed: most positions fall on the first few unique rows (a hot
// row then sums hundreds of positions), one bag in four holds one row.
inline Bags RandomBags(data::gen::Rng& rng, size_t slots, size_t unique, size_t samples, bool skewed = false) {
  Bags bags;
  for (size_t u = 0; u < unique; ++u) bags.unique_slots.push_back(static_cast<uint32_t>(rng.Below(slots)));
  for (size_t i = 0; i < samples; ++i) {
    size_t len = rng.Below(8) == 0 ? 10 + rng.Below(20) : rng.Below(4);
    if (skewed && rng.Below(4) == 0) len = 1;
    for (size_t p = 0; p < len; ++p) {
      const size_t u = skewed && rng.Below(4) != 0 ? rng.Below(unique < 3 ? unique : 3) : rng.Below(unique);
      bags.inverse.push_back(static_cast<uint32_t>(u));
    }
    bags.offsets.push_back(static_cast<uint32_t>(bags.inverse.size()));
  }
  return bags;
}

// Values over 21 binades, so that sums round and their order shows.
inline float RandomValue(data::gen::Rng& rng) {
  return static_cast<float>(std::ldexp(rng.Normal(), static_cast<int>(rng.Below(21)) - 10));
}

// One GEMM problem: op(A) m×k and op(B) k×n from a normal distribution,
// stored with 0–2 floats of padding after each row; with beta == 0, C holds
// NaNs (a backend must not read it); the padding of C holds 12345.
struct GemmCase {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc;
  std::vector<float> a, b, c;
  float A(int i, int p) const { return ta ? a[size_t(p) * lda + i] : a[size_t(i) * lda + p]; }
  float B(int p, int j) const { return tb ? b[size_t(j) * ldb + p] : b[size_t(p) * ldb + j]; }
  void Run(Backend& be, float alpha, float beta, float* out) const {
    be.Gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, out, ldc);
  }
};
inline constexpr float kGemmPadding = 12345.0f;

inline GemmCase MakeGemmCase(data::gen::Rng& rng, bool ta, bool tb, int m, int n, int k, float beta) {
  const int pad = static_cast<int>(rng.Below(3));
  GemmCase g{ta, tb, m, n, k, (ta ? m : k) + pad, (tb ? k : n) + pad, n + pad, {}, {}, {}};
  g.a.resize(size_t(ta ? k : m) * g.lda);
  g.b.resize(size_t(tb ? n : k) * g.ldb);
  g.c.resize(size_t(m) * g.ldc);
  for (float& x : g.a) x = static_cast<float>(rng.Normal());
  for (float& x : g.b) x = static_cast<float>(rng.Normal());
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < g.ldc; ++j) {
      g.c[size_t(i) * g.ldc + j] = j >= n             ? kGemmPadding
                                   : beta == 0.0f ? std::numeric_limits<float>::quiet_NaN()
                                                  : static_cast<float>(rng.Normal());
    }
  }
  return g;
}

// k == 0 scales C by beta (beta == 0: zeros, whatever C held); m or n == 0
// touches nothing (null pointers are fine).
inline void CheckEmptyGemms(Backend& be) {
  std::vector<float> c{1.0f, 2.0f, 3.0f, 4.0f};
  be.Gemm(false, false, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 0, 0.5f, c.data(), 2);
  CHECK(c == std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f});
  c.assign(4, std::numeric_limits<float>::quiet_NaN());
  be.Gemm(true, true, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 0, 0.0f, c.data(), 2);
  CHECK(c == std::vector<float>(4, 0.0f));
  be.Gemm(false, false, 0, 2, 3, 1.0f, nullptr, 3, nullptr, 2, 0.0f, nullptr, 2);
  be.Gemm(false, false, 2, 0, 3, 1.0f, nullptr, 3, nullptr, 1, 0.0f, nullptr, 1);
}

// The same m×k by k×n GEMM from fresh backends of `make`: twice on this
// thread (each backend calls it twice), once on each of two threads at the
// same time; every result must have the first one's bits.
inline void CheckGemmRepeats(const std::function<std::unique_ptr<Backend>()>& make, int m, int n, int k) {
  data::gen::Rng rng(11);
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
  for (float& x : a) x = static_cast<float>(rng.Normal());
  for (float& x : b) x = static_cast<float>(rng.Normal());
  auto run = [&](std::vector<float>* c) {
    auto be = make();
    if (!be) return;  // c stays empty: fails the comparison below
    c->assign(size_t(m) * n, 0.0f);
    be->Gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c->data(), n);
    be->Gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c->data(), n);
  };
  std::vector<float> first, again, t1, t2;
  run(&first);
  run(&again);
  std::thread th1(run, &t1), th2(run, &t2);
  th1.join();
  th2.join();
  REQUIRE(!first.empty());
  CHECK(SameBits(first, again));
  CHECK(SameBits(first, t1));
  CHECK(SameBits(first, t2));
}

// One pooling problem: a slot table with a row stride, bags over it, and a
// pooled gradient, each with its own stride; a few −0.0f values among them.
struct BagCase {
  size_t width, stride, out_stride, in_stride, samples, unique;
  std::vector<float> rows, grad;
  Bags bags;
};

inline BagCase MakeBagCase(data::gen::Rng& rng, size_t width, size_t slots, size_t unique, size_t samples,
                           bool skewed) {
  BagCase c{width, width + rng.Below(5), width + rng.Below(3), width + rng.Below(3), samples, unique, {}, {}, {}};
  c.rows.resize(slots * c.stride);
  for (float& x : c.rows) x = RandomValue(rng);
  for (int z = 0; z < 3; ++z) c.rows[rng.Below(c.rows.size())] = -0.0f;
  c.bags = RandomBags(rng, slots, unique, samples, skewed);
  c.grad.resize(samples * c.in_stride);
  for (float& x : c.grad) x = RandomValue(rng);
  c.grad[rng.Below(c.grad.size())] = -0.0f;
  return c;
}

}  // namespace actorrec::gpu
