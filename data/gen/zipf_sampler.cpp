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
  uint64_t k = first;
  // Smallest terms first: less rounding.
  const uint64_t exact_end = std::min(last, first + kExactTerms - 1);
  for (uint64_t j = exact_end; j >= k && j > 0; --j) sum += std::pow(static_cast<double>(j), -alpha);
  if (exact_end == last) return sum;
  const double a = static_cast<double>(exact_end + 1);
  const double b = static_cast<double>(last);
  auto f = [alpha](double x) { return std::pow(x, -alpha); };
  auto df = [alpha](double x) { return -alpha * std::pow(x, -alpha - 1.0); };
  return sum + (PowerIntegral(alpha, b) - PowerIntegral(alpha, a)) + 0.5 * (f(a) + f(b)) + (df(b) - df(a)) / 12.0;
}

ZipfSampler::ZipfSampler(uint64_t n, double alpha, uint64_t first) : n_(n), first_(first), alpha_(alpha) {
  // Rank k owns [H(k - 0.5), H(k + 0.5)) of the hat, of which the part of
  // length h(k) at its top accepts: the integral of the convex h over the
  // interval exceeds h(k). Rank 1 instead owns exactly h(1) = 1 below H(1.5),
  // which avoids the pole of h at 0 (Commons RNG's refinement).
  h_first_ = first == 1 ? H(1.5) - 1.0 : H(static_cast<double>(first) - 0.5);
  h_n_ = H(static_cast<double>(n) + 0.5);
  // The squeeze holds for every k >= 2 (its worst case is k = 2), so it also
  // serves a sampler that starts past rank 2.
  s_ = 2.0 - HInverse(H(2.5) - h(2.0));
}

double ZipfSampler::H(double x) const {
  const double log_x = std::log(x);
  return Helper2((1.0 - alpha_) * log_x) * log_x;
}

double ZipfSampler::h(double x) const { return std::exp(-alpha_ * std::log(x)); }

double ZipfSampler::HInverse(double x) const {
  double t = x * (1.0 - alpha_);
  if (t < -1.0) t = -1.0;  // rounding can push it just below the domain
  return std::exp(Helper1(t) * x);
}

uint64_t ZipfSampler::Sample(Rng& rng) const {
  for (;;) {
    // Uniform on (h_first_, H(n + 0.5)]: the hat's integral.
    const double u = h_n_ + rng.Uniform() * (h_first_ - h_n_);
    const double x = HInverse(u);
    double kd = std::floor(x + 0.5);
    if (kd < static_cast<double>(first_)) kd = static_cast<double>(first_);
    if (kd > static_cast<double>(n_)) kd = static_cast<double>(n_);
    if (kd - x <= s_ || u >= H(kd + 0.5) - h(kd)) return static_cast<uint64_t>(kd) - 1;
  }
}

}  // namespace actorrec::data::gen
