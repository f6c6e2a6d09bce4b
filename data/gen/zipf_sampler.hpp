// ZipfSampler: ranks with P(k) ~ k^-alpha on {first..n}, O(1) per draw and O(1)
// memory whatever n, by rejection-inversion (W. Hormann and G. Derflinger,
// "Rejection-inversion to generate variates from monotone discrete
// distributions", ACM TOMACS 6(3), 1996), in the form of Apache Commons
// RNG's RejectionInversionZipfSampler. A CDF table would cost 8 bytes per row
// (80 MB for one 10 M-row Criteo table) and a binary search per draw.
#pragma once

#include <cstdint>

#include "data/gen/random.hpp"

namespace actorrec::data::gen {

// sum_{k = first}^{last} k^-alpha: exact summation up to 4096 terms, beyond
// that the Euler-Maclaurin formula to the first derivative term, whose error
// (~ alpha^3 first^(-alpha - 3) / 720) is below double rounding for first >= 4096.
double ZipfWeightSum(double alpha, uint64_t first, uint64_t last);

class ZipfSampler {
 public:
  // REQUIRES: 1 <= first <= n, alpha > 0.
  ZipfSampler(uint64_t n, double alpha, uint64_t first = 1);

  // A rank in [first - 1, n): 0-based, so rank 0 is the most frequent. About one log and one exp per
  // draw; the second test below rejects rarely (under 2 % of draws near
  // alpha = 1).
  uint64_t Sample(Rng& rng) const;

 private:
  // H(x), the integral of h(x) = x^-alpha, shifted so that it is finite at
  // alpha = 1, and its inverse; Taylor forms near alpha = 1 avoid 0/0.
  double H(double x) const;
  double h(double x) const;
  double HInverse(double x) const;

  uint64_t n_;
  uint64_t first_;
  double alpha_;
  double h_first_;  // H(first - 0.5), or H(1.5) - 1 when first = 1
  double h_n_;   // H(n + 0.5)
  double s_;     // squeeze: k - x <= s accepts without evaluating H
};

}  // namespace actorrec::data::gen
