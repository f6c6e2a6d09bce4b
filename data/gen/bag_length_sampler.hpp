// BagLengthSampler: draws how many ids a multi-hot bag holds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "data/gen/generator_options.hpp"
#include "data/gen/random.hpp"

namespace actorrec::data::gen {

class BagLengthSampler {
 public:
  // REQUIRES: the options passed Validate.
  explicit BagLengthSampler(const BagLength& bag) : bag_(bag) {
    if (bag.kind == BagLength::Kind::kGeometric && bag.mean > 1.0) log_q_ = std::log1p(-1.0 / bag.mean);
    if (bag.kind == BagLength::Kind::kPoisson) exp_neg_mean_ = std::exp(-bag.mean);
  }

  uint32_t Sample(Rng& rng) const {
    switch (bag_.kind) {
      case BagLength::Kind::kFixed:
        return bag_.min;
      case BagLength::Kind::kUniform:
        return bag_.min + static_cast<uint32_t>(rng.Below(uint64_t{bag_.max} - bag_.min + 1));
      case BagLength::Kind::kGeometric:
        // Inversion: P(L > k) = q^k with q = 1 - 1/mean, so the mean is `mean`.
        if (bag_.mean <= 1.0) return 1;
        return 1 + static_cast<uint32_t>(std::min(1e9, std::floor(std::log(rng.UniformOpenZero()) / log_q_)));
      case BagLength::Kind::kPoisson:
        return SamplePoisson(rng);
    }
    return 0;
  }

 private:
  // Sequential search of the CDF from 0 (Devroye 1986, X.3.3): exact, O(mean)
  // per draw, which Validate bounds.
  uint32_t SamplePoisson(Rng& rng) const {
    const double u = rng.Uniform();
    double p = exp_neg_mean_;
    double cdf = p;
    uint32_t k = 0;
    while (u >= cdf && p > 0.0) {
      ++k;
      p *= bag_.mean / k;
      cdf += p;
    }
    return k;
  }

  BagLength bag_;
  double log_q_ = 0;
  double exp_neg_mean_ = 0;
};

}  // namespace actorrec::data::gen
