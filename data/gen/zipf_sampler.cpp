// Rejection-inversion Zipf sampling (Hormann & Derflinger 1996).
#include "data/gen/zipf_sampler.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::data::gen {

namespace {

constexpr double kTaylorThreshold = 1e-8;

// log1p(x) / x, continuous at 0.
double Helper1(double x) {
  if (std::fabs(x) > kTaylorThreshold) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x) / x, continuous at 0.
double Helper2(double x) {
  if (std::fabs(x) > kTaylorThreshold) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

// The integral of x^-alpha from 1 to x: (x^(1 - alpha) - 1) / (1 - alpha),
// or log x at alpha = 1.
double PowerIntegral(double alpha, double x) {
  const double log_x = std::log(x);
  return Helper2((1.0 - alpha) * log_x) * log_x;
}

}  // namespace

double ZipfWeightSum(double alpha, uint64_t first, uint64_t last) {
  constexpr uint64_t kExactTerms = 4096;
  double sum = 0.0;
  // Smallest terms first: less rounding.
  const uint64_t exact_end = std::min(last, first + kExactTerms - 1);
  for (uint64_t k = exact_end; k >= first && k > 0; --k) sum += std::pow(static_cast<double>(k), -alpha);
  if (exact_end == last) return sum;
  const double a = static_cast<double>(exact_end + 1);
  const double b = static_cast<double>(last);
  auto f = [alpha](double x) { return std::pow(x, -alpha); };
  auto df = [alpha](double x) { return -alpha * std::pow(x, -alpha - 1.0); };
  return sum + (PowerIntegral(alpha, b) - PowerIntegral(alpha, a)) + 0.5 * (f(a) + f(b)) + (df(b) - df(a)) / 12.0;
}

ZipfSampler::ZipfSampler(uint64_t n, double alpha, uint64_t first) : n_(n), first_(first), alpha_(alpha) {
  // Rank k owns [Integral(k - 0.5), Integral(k + 0.5)) of the hat, and the
  // part of length Density(k) at its top accepts: the density is convex, so
  // its integral over the interval exceeds Density(k). Rank 1 instead owns
  // exactly Density(1) = 1 below Integral(1.5), which keeps clear of the pole
  // at 0 (Commons RNG's refinement).
  integral_first_ = first == 1 ? Integral(1.5) - 1.0 : Integral(static_cast<double>(first) - 0.5);
  integral_n_ = Integral(static_cast<double>(n) + 0.5);
  // The squeeze is computed at k = 2, its tightest case, and Commons RNG uses
  // it for every k >= 2 as the paper does, so it also serves a sampler that
  // starts past rank 2 (the tail tests check the resulting frequencies).
  squeeze_ = 2.0 - IntegralInverse(Integral(2.5) - Density(2.0));
}

double ZipfSampler::Integral(double x) const { return PowerIntegral(alpha_, x); }

double ZipfSampler::Density(double x) const { return std::exp(-alpha_ * std::log(x)); }

double ZipfSampler::IntegralInverse(double x) const {
  double t = x * (1.0 - alpha_);
  if (t < -1.0) t = -1.0;  // rounding can push it just below the domain
  return std::exp(Helper1(t) * x);
}

uint64_t ZipfSampler::Sample(Rng& rng) const {
  for (;;) {
    // Uniform on (integral_first_, Integral(n + 0.5)]: the hat's integral.
    const double u = integral_n_ + rng.Uniform() * (integral_first_ - integral_n_);
    const double x = IntegralInverse(u);
    double kd = std::floor(x + 0.5);
    if (kd < static_cast<double>(first_)) kd = static_cast<double>(first_);
    if (kd > static_cast<double>(n_)) kd = static_cast<double>(n_);
    if (kd - x <= squeeze_ || u >= Integral(kd + 0.5) - Density(kd)) return static_cast<uint64_t>(kd) - 1;
  }
}

}  // namespace actorrec::data::gen
