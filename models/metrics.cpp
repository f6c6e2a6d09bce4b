#include "models/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::models {
namespace {

struct Scored {
  float score;
  bool positive;
};

// NaN below every number; the order of equal keys does not matter (ties
// share one average rank).
bool Below(float a, float b) { return std::isnan(a) ? !std::isnan(b) : (!std::isnan(b) && a < b); }
bool Same(float a, float b) { return std::isnan(a) ? std::isnan(b) : a == b; }

}  // namespace

double ExactAuc(std::span<const float> scores, std::span<const float> labels) {
  const size_t n = std::min(scores.size(), labels.size());
  std::vector<Scored> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = {scores[i], labels[i] > 0.5f};
  std::sort(v.begin(), v.end(), [](const Scored& a, const Scored& b) { return Below(a.score, b.score); });
  // The positives' rank sum, each tie group at its average rank; the group's
  // positive count is integral, so the sum is exact in double up to 2^53.
  double positive_ranks = 0.0;
  uint64_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint64_t group_positives = 0;
    while (j < n && Same(v[j].score, v[i].score)) group_positives += v[j++].positive;
    positive_ranks += 0.5 * static_cast<double>(i + 1 + j) * static_cast<double>(group_positives);
    positives += group_positives;
    i = j;
  }
  const uint64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  const double p = static_cast<double>(positives);
  return (positive_ranks - p * (p + 1.0) / 2.0) / (p * static_cast<double>(negatives));
}

double LogLoss(std::span<const float> logits, std::span<const float> labels) {
  const size_t n = std::min(logits.size(), labels.size());
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double z = logits[i], y = labels[i];
    sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

double Accuracy(std::span<const float> logits, std::span<const float> labels) {
  const size_t n = std::min(logits.size(), labels.size());
  uint64_t right = 0;
  for (size_t i = 0; i < n; ++i) right += (logits[i] > 0.0f) == (labels[i] > 0.5f);
  return n == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(n);
}

void MetricAccumulator::Add(std::span<const float> logits, std::span<const float> labels) {
  logits_.insert(logits_.end(), logits.begin(), logits.end());
  labels_.insert(labels_.end(), labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(logits.size()));
}

void MetricAccumulator::Clear() {
  logits_.clear();
  labels_.clear();
}

}  // namespace actorrec::models
