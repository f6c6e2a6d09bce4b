// Metrics: AUC by hand and against the O(n²) pair count over many seeds
// (with ties and NaN scores), log-loss and accuracy by hand, and the
// accumulator over batches equal to one call over everything.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "data/gen/random.hpp"
#include "models/metrics.hpp"

namespace actorrec::models {
namespace {

// The share of (positive, negative) pairs ordered correctly, ties half, NaN
// lowest: the definition ExactAuc implements in O(n log n).
double PairCountAuc(const std::vector<float>& s, const std::vector<float>& y) {
  auto key = [](float x) { return std::isnan(x) ? -std::numeric_limits<double>::infinity() : double(x); };
  double right = 0, pairs = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = 0; j < s.size(); ++j) {
      if (y[i] > 0.5f && y[j] <= 0.5f) {
        pairs += 1;
        const bool both_nan = std::isnan(s[i]) && std::isnan(s[j]);
        right += both_nan || key(s[i]) == key(s[j]) ? 0.5 : key(s[i]) > key(s[j]) ? 1.0 : 0.0;
      }
    }
  }
  return pairs == 0 ? 0.5 : right / pairs;
}

}  // namespace

TEST_CASE("exact AUC, log-loss and accuracy by hand", "[models]") {
  const std::vector<float> scores = {0.1f, 0.4f, 0.35f, 0.8f};
  const std::vector<float> labels = {0, 0, 1, 1};
  CHECK(ExactAuc(scores, labels) == Approx(0.75));
  CHECK(ExactAuc(std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}, labels) == 0.5);
  CHECK(ExactAuc(scores, std::vector<float>{1, 1, 1, 1}) == 0.5);
  CHECK(ExactAuc(std::vector<float>{}, std::vector<float>{}) == 0.5);
  CHECK(ExactAuc(std::vector<float>{1.0f, 2.0f}, std::vector<float>{0, 1}) == 1.0);
  CHECK(ExactAuc(std::vector<float>{2.0f, 1.0f}, std::vector<float>{0, 1}) == 0.0);
  CHECK(Accuracy(std::vector<float>{-1.0f, 2.0f, 3.0f}, std::vector<float>{0, 1, 0}) == Approx(2.0 / 3.0));
  CHECK(LogLoss(std::vector<float>{0.0f}, std::vector<float>{1}) == Approx(std::log(2.0)));
  CHECK(LogLoss(std::vector<float>{-100.0f}, std::vector<float>{1}) == Approx(100.0));  // no overflow
  CHECK(LogLoss(std::vector<float>{}, std::vector<float>{}) == 0.0);
}

TEST_CASE("exact AUC equals the pair count, ties and NaN included", "[models]") {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    data::gen::Rng rng(seed);
    const size_t n = rng.Below(40);
    std::vector<float> s(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      // Few distinct scores, so that ties are common; now and then a NaN or −0.
      const uint64_t pick = rng.Below(12);
      s[i] = pick == 0 ? std::numeric_limits<float>::quiet_NaN() : pick == 1 ? -0.0f : static_cast<float>(pick % 5);
      y[i] = rng.Below(3) == 0 ? 1.0f : 0.0f;
    }
    INFO("seed " << seed);
    const double auc = ExactAuc(s, y);
    CHECK_FALSE(std::isnan(auc));
    CHECK(auc == Approx(PairCountAuc(s, y)).margin(1e-12));
  }
}

TEST_CASE("the accumulator over batches equals one call over everything", "[models]") {
  data::gen::Rng rng(5);
  std::vector<float> logits(1000), labels(1000);
  for (size_t i = 0; i < logits.size(); ++i) {
    labels[i] = rng.Below(2) ? 1.0f : 0.0f;
    logits[i] = static_cast<float>(rng.Normal() + (labels[i] > 0 ? 0.7 : 0.0));
  }
  MetricAccumulator acc;
  for (size_t start = 0; start < logits.size(); start += 300) {
    const size_t len = std::min<size_t>(300, logits.size() - start);
    acc.Add(std::span<const float>(logits).subspan(start, len), std::span<const float>(labels).subspan(start, len));
  }
  CHECK(acc.samples() == 1000);
  CHECK(acc.auc() == ExactAuc(logits, labels));
  CHECK(acc.auc() > 0.6);
  CHECK(acc.log_loss() == LogLoss(logits, labels));
  CHECK(acc.accuracy() == Accuracy(logits, labels));
  acc.Clear();
  CHECK(acc.samples() == 0);
}

}  // namespace actorrec::models
