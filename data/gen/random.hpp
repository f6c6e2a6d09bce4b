// Random numbers for the synthetic generator. Our own rather than <random>'s
// distributions, whose algorithms are implementation-defined: one seed must
// give the same dataset on every machine and standard library.
#pragma once

#include <cmath>
#include <cstdint>

namespace actorrec::data::gen {

// SplitMix64's finalizer (Steele, Lea & Flood 2014): a bijective 64-bit mixer
// whose output passes BigCrush; used both as the stream step and as a hash.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A hash of two words, for deriving keys such as (seed, block index) or
// (table key, row) without storing anything.
inline uint64_t HashPair(uint64_t a, uint64_t b) { return Mix64(a ^ Mix64(b + 0x9e3779b97f4a7c15ULL)); }

// The sum of the four bytes of `x`, in [0, 1020]: the Irwin-Hall sum of four
// 8-bit uniforms, an approximately normal level with mean 510 that needs no
// transcendental call (see NormalOfLevel).
inline uint32_t ByteSum(uint32_t x) {
  x = (x & 0x00ff00ffu) + ((x >> 8) & 0x00ff00ffu);
  return (x & 0xffffu) + (x >> 16);
}

// The number of ByteSum levels.
constexpr uint32_t kNormalLevels = 1021;

// ByteSum's level as an approximate standard normal: each byte stands for the
// middle of its interval, so the mean is exactly 0; the variance is 1 - 2^-16;
// the range is bounded at +-3.46, which keeps log-normal values finite.
inline double NormalOfLevel(uint32_t level) {
  return ((static_cast<double>(level) + 2.0) * (1.0 / 256.0) - 2.0) * 1.7320508075688772;
}

// A hash of a row under a key: SplitMix64's output number `row` for seed
// `key`, one mix instead of HashPair's two, for the per-id hot path.
inline uint64_t HashRow(uint64_t key, uint64_t row) { return Mix64(key + row * 0x9e3779b97f4a7c15ULL); }

// The top 53 bits of `bits` as a double in [0, 1).
inline double ToUnit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// SplitMix64 as a stream: one add and one mix per word, about 1 ns, which
// matters at tens of draws per sample. Not for cryptography.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  // In [0, 1).
  double Uniform() { return ToUnit(Next()); }
  // In (0, 1]: safe to take the logarithm of.
  double UniformOpenZero() { return 1.0 - Uniform(); }
  // In [0, n) by multiply-shift (Lemire 2019) without the rejection step:
  // the bias is below n / 2^64, far under anything a test could see.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // A standard normal variate by Box-Muller (one of the pair is dropped:
  // simpler state, and normals are drawn rarely on the hot path).
  double Normal() {
    const double r = std::sqrt(-2.0 * std::log(UniformOpenZero()));
    return r * std::cos(6.283185307179586 * Uniform());
  }

 private:
  uint64_t state_;
};

}  // namespace actorrec::data::gen
