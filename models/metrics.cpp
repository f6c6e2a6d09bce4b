#include "models/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace actorrec::models {

double ExactAuc(std::span<const float> scores, std::span<const float> labels) {
  const size_t n = scores.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
  // Mann–Whitney U: the sum of the positives' ranks, ties at their average rank.
  double positive_ranks = 0.0;
  uint64_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + 1 + j);  // average of ranks i+1 … j
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0.5f) {
        positive_ranks += rank;
        ++positives;
      }
    }
    i = j;
  }
  const uint64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  const double p = static_cast<double>(positives);
  return (positive_ranks - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

void MetricAccumulator::Add(std::span<const float> logits, std::span<const float> labels) {
  logits_.insert(logits_.end(), logits.begin(), logits.end());
  labels_.insert(labels_.end(), labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(logits.size()));
}

double MetricAccumulator::log_loss() const {
  double sum = 0.0;
  for (size_t i = 0; i < logits_.size(); ++i) {
    const double z = logits_[i], y = labels_[i];
    sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
  }
  return logits_.empty() ? 0.0 : sum / static_cast<double>(logits_.size());
}

double MetricAccumulator::accuracy() const {
  uint64_t right = 0;
  for (size_t i = 0; i < logits_.size(); ++i) right += (logits_[i] > 0.0f) == (labels_[i] > 0.5f);
  return logits_.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(logits_.size());
}

}  // namespace actorrec::models
