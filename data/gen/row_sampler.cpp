// Access distributions: exact rank weights and O(1) rank draws.
#include "data/gen/row_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace actorrec::data::gen {

using Kind = AccessDistribution::Kind;

uint64_t HotRows(const AccessDistribution& access, uint64_t rows) {
  const auto hot = static_cast<uint64_t>(std::llround(access.hot_fraction * static_cast<double>(rows)));
  return std::clamp<uint64_t>(hot, 1, rows);
}

double RankWeight(const AccessDistribution& access, uint64_t rows, uint64_t rank) {
  const double n = static_cast<double>(rows);
  const double r = static_cast<double>(rank);
  switch (access.kind) {
    case Kind::kUniform:
      return 1.0;
    case Kind::kZipf:
      return std::pow(r + 1.0, -access.alpha);
    case Kind::kTopShare: {
      const uint64_t hot = HotRows(access, rows);
      if (hot == rows) return 1.0;
      return rank < hot ? access.hot_share / static_cast<double>(hot)
                        : (1.0 - access.hot_share) / static_cast<double>(rows - hot);
    }
    case Kind::kHalfNormal: {
      // P(r <= |Z| * sigma * n < r + 1), by erfc to keep the far tail exact.
      const double scale = 1.0 / (access.sigma * n * std::sqrt(2.0));
      return std::erfc(r * scale) - std::erfc((r + 1.0) * scale);
    }
    case Kind::kExponential:
      // P(r <= X * n < r + 1) for X ~ Exp(lambda), up to the constant factor 1 - exp(-lambda / n).
      return std::exp(-access.lambda * r / n);
  }
  return 0.0;
}

RowSampler::RowSampler(const AccessDistribution& access, uint64_t rows, uint64_t permutation_key)
    : access_(access), rows_(rows), permutation_(rows, permutation_key) {
  if (rows <= kAliasMaxRows) {
    std::vector<double> weights(rows);
    for (uint64_t r = 0; r < rows; ++r) weights[permutation_(r)] = RankWeight(access, rows, r);
    alias_.emplace(weights);
    return;
  }
  if (access.kind == Kind::kZipf) {
    std::vector<double> weights(kZipfHeadRanks);
    for (uint64_t r = 0; r < kZipfHeadRanks; ++r) weights[r] = RankWeight(access, rows, r);
    const AliasTable alias(weights);
    for (uint64_t r = 0; r < kZipfHeadRanks; ++r) {
      head_.push_back({alias.threshold(r), static_cast<RowId>(permutation_(r)),
                       static_cast<RowId>(permutation_(alias.alias(r)))});
    }
    tail_.emplace(rows, access.alpha, kZipfHeadRanks + 1);
    const double head = ZipfWeightSum(access.alpha, 1, kZipfHeadRanks);
    head_mass_ = head / (head + ZipfWeightSum(access.alpha, kZipfHeadRanks + 1, rows));
  }
  if (access.kind == Kind::kTopShare) hot_rows_ = HotRows(access, rows);
  if (access.kind == Kind::kExponential) exp_span_ = -std::expm1(-access.lambda);
}

uint64_t RowSampler::SampleRank(Rng& rng) const {
  const double n = static_cast<double>(rows_);
  switch (access_.kind) {
    case Kind::kUniform:
      return rng.Below(rows_);
    case Kind::kZipf:
      return tail_->Sample(rng);
    case Kind::kTopShare:
      if (hot_rows_ == rows_) return rng.Below(rows_);
      if (rng.Uniform() < access_.hot_share) return rng.Below(hot_rows_);
      return hot_rows_ + rng.Below(rows_ - hot_rows_);
    case Kind::kHalfNormal:
      // Rejection of the part beyond the table: the truncated distribution.
      for (;;) {
        const double r = std::floor(std::fabs(rng.Normal()) * access_.sigma * n);
        if (r < n) return static_cast<uint64_t>(r);
      }
    case Kind::kExponential: {
      // Inversion of Exp(lambda) truncated to [0, 1).
      const double x = -std::log1p(-rng.Uniform() * exp_span_) / access_.lambda;
      return std::min(rows_ - 1, static_cast<uint64_t>(x * n));
    }
  }
  return 0;
}

}  // namespace actorrec::data::gen
