// Evaluation metrics over logits: ROC AUC computed exactly, log-loss and
// accuracy at logit 0 (probability ½).
//
// Conventions: a label > 0.5 is positive. ExactAuc is the Mann–Whitney
// statistic: the share of (positive, negative) pairs the scores order
// correctly, ties counting half. It is 0.5 when one class is absent (no pair
// to order), and it never returns NaN: a NaN score ranks below every number
// and ties with the other NaNs (a model emitting NaN scores as "lowest"
// rather than poisoning the metric; the loss shows the NaN). Every function
// sums in index order, so results depend only on the inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace actorrec::models {

// O(n log n). scores and labels have the same size.
double ExactAuc(std::span<const float> scores, std::span<const float> labels);
// Mean BCE of σ(logit), computed stably in double; 0 for no samples.
double LogLoss(std::span<const float> logits, std::span<const float> labels);
// Share of samples with (logit > 0) == (label > 0.5); 0 for no samples.
double Accuracy(std::span<const float> logits, std::span<const float> labels);

// Collects logits and labels over many batches, for the metrics of the
// whole evaluation (AUC is not an average over batches).
class MetricAccumulator {
 public:
  // labels holds at least logits.size() entries; the first logits.size() count.
  void Add(std::span<const float> logits, std::span<const float> labels);
  void Clear();
  uint64_t samples() const { return logits_.size(); }
  double auc() const { return ExactAuc(logits_, labels_); }
  double log_loss() const { return LogLoss(logits_, labels_); }
  double accuracy() const { return Accuracy(logits_, labels_); }

 private:
  std::vector<float> logits_, labels_;
};

}  // namespace actorrec::models
