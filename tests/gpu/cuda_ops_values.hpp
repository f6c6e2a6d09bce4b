// Inputs for the tests of the CUDA kernels' per-element functions (host and
// device): random floats of a chosen mix, and bitwise comparison of float
// buffers that names the first differing element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace actorrec::gpu::cuda::testing {

enum class Mix {
  kNormal,  // N(0, 1)
  kSkewed,  // signs and exponents from 2^-20 to 2^20: sums that lose bits
  kEdges,   // mostly N(0, 1), with ±0, subnormals, ±1, large and tiny values mixed in
};

class Values {
 public:
  explicit Values(uint64_t seed) : rng_(seed) {}

  float Next(Mix mix) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    switch (mix) {
      case Mix::kNormal: return normal(rng_);
      case Mix::kSkewed: {
        const int e = std::uniform_int_distribution<int>(-20, 20)(rng_);
        const float m = std::uniform_real_distribution<float>(1.0f, 2.0f)(rng_);
        return (rng_() % 2 ? -1.0f : 1.0f) * std::ldexp(m, e);
      }
      case Mix::kEdges: {
        static constexpr float kEdge[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f, 1e-30f, -3e20f, 5e19f, 0.5f};
        if (rng_() % 4 == 0) return kEdge[rng_() % (sizeof(kEdge) / sizeof(kEdge[0]))];
        return normal(rng_);
      }
    }
    return 0.0f;
  }

  std::vector<float> Vector(size_t n, Mix mix) {
    std::vector<float> v(n);
    for (float& x : v) x = Next(mix);
    return v;
  }

  // 0 or 1.
  std::vector<float> Labels(size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = rng_() % 2 ? 1.0f : 0.0f;
    return v;
  }

  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }

 private:
  std::mt19937_64 rng_;
};

inline constexpr Mix kMixes[] = {Mix::kNormal, Mix::kSkewed, Mix::kEdges};

inline uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// "" when a and b hold the same bits, else the first differing element.
inline std::string BitwiseDiff(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (Bits(a[i]) != Bits(b[i])) {
      std::ostringstream out;
      out.precision(9);
      out << "element " << i << " of " << n << ": " << a[i] << " vs " << b[i];
      return out.str();
    }
  }
  return "";
}

inline std::string BitwiseDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  return BitwiseDiff(a.data(), b.data(), a.size());
}

}  // namespace actorrec::gpu::cuda::testing
