// Evaluation metrics over logits: AUC computed exactly (ties get half
// credit, through average ranks), log-loss and accuracy at logit 0.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace actorrec::models {

// 0.5 when one class is absent (no pair to rank).
double ExactAuc(std::span<const float> scores, std::span<const float> labels);

// Collects logits and labels over many batches.
class MetricAccumulator {
 public:
  void Add(std::span<const float> logits, std::span<const float> labels);
  uint64_t samples() const { return logits_.size(); }
  double auc() const { return ExactAuc(logits_, labels_); }
  double log_loss() const;   // mean BCE of σ(logit)
  double accuracy() const;   // share with (logit > 0) == label

 private:
  std::vector<float> logits_, labels_;
};

}  // namespace actorrec::models
