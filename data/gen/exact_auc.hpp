// ExactAuc: the area under the ROC curve of scores against 0/1 labels,
// exactly (the Mann-Whitney statistic): sort once, and count a tied
// positive-negative pair as one half, so equal scores earn 0.5, not a
// lucky 0 or 1 depending on the order of the input.
#pragma once

#include <span>

namespace actorrec::data::gen {

// Labels > 0.5 are positives. NaN when either class is absent (no AUC is
// defined). O(n log n) time, 8 bytes of scratch per sample.
// REQUIRES: scores.size() == labels.size(); no NaN scores.
double ExactAuc(std::span<const float> scores, std::span<const float> labels);

}  // namespace actorrec::data::gen
