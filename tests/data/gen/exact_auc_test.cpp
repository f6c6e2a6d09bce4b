// ExactAuc against the pairwise definition, ties counted as one half.
#include "data/gen/exact_auc.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

using actorrec::data::gen::ExactAuc;

namespace {

double PairwiseAuc(const std::vector<float>& scores, const std::vector<float>& labels) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i)
    for (size_t j = 0; j < scores.size(); ++j)
      if (labels[i] > 0.5f && labels[j] < 0.5f) {
        pairs += 1;
        wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
      }
  return wins / pairs;
}

}  // namespace

TEST_CASE("ExactAuc equals the pairwise count, ties as one half", "[data]") {
  const int n = GENERATE(take(20, random(2, 300)));
  std::mt19937 rng(n);
  std::vector<float> scores(n), labels(n);
  // Few distinct scores, negative ones and -0 among them, so ties are common.
  for (int i = 0; i < n; ++i) {
    scores[i] = static_cast<float>(static_cast<int>(rng() % 9) - 4) * 0.25f;
    if (scores[i] == 0.0f && rng() % 2) scores[i] = -0.0f;
    labels[i] = static_cast<float>(rng() % 2);
  }
  labels[0] = 1;
  labels[1] = 0;
  CHECK(ExactAuc(scores, labels) == Approx(PairwiseAuc(scores, labels)).epsilon(1e-12));
}

TEST_CASE("ExactAuc of perfect, reversed, tied and one-class scores", "[data]") {
  const std::vector<float> labels = {0, 0, 1, 1};
  CHECK(ExactAuc(std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}, labels) == 1.0);
  CHECK(ExactAuc(std::vector<float>{0.4f, 0.3f, 0.2f, 0.1f}, labels) == 0.0);
  CHECK(ExactAuc(std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}, labels) == 0.5);
  CHECK(std::isnan(ExactAuc(std::vector<float>{0.1f, 0.2f}, std::vector<float>{1, 1})));
}
