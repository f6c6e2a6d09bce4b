// Weights and shapes of the hidden label model, all derived from the seed.
#include "data/gen/ground_truth.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::data::gen {

GroundTruth::GroundTruth(const GeneratorOptions& options) {
  const size_t num_tables = options.tables.size();
  for (uint32_t a = 0; a + 1 < num_tables && pairs_.size() < kMaxPairs; a += 2) pairs_.emplace_back(a, a + 1);

  double dense_share = options.num_dense > 0 ? 0.3 : 0.0;
  double row_share = num_tables > 0 ? 0.5 : 0.0;
  double pair_share = pairs_.empty() ? 0.0 : 0.2;
  const double total = dense_share + row_share + pair_share;
  const double variance = options.signal * options.signal * kLogitStd * kLogitStd;
  if (total > 0) {
    dense_share *= variance / total;
    row_share *= variance / total;
    pair_share *= variance / total;
  }

  const uint64_t key = Mix64(options.seed ^ 0x6a09e667f3bcc908ULL);
  for (uint32_t j = 0; j < options.num_dense; ++j) {
    const uint64_t h = HashPair(key, j);
    const double sign = (h & 1) ? 1.0 : -1.0;
    DenseShape d;
    d.weight = sign * std::sqrt(dense_share / options.num_dense);
    d.mu = 3.0 * ToUnit(Mix64(h));         // median count between 1 and 20
    d.s = 0.5 + ToUnit(Mix64(h + 1));      // spread of the log-count
    dense_.push_back(d);
    for (uint32_t level = 0; level < kNormalLevels; ++level)
      dense_values_.push_back(static_cast<float>(std::log1p(std::floor(std::exp(d.mu + d.s * NormalOfLevel(level))))));
  }
  for (size_t t = 0; t < num_tables; ++t) {
    TableModel m;
    m.weight = num_tables > 0 ? std::sqrt(row_share / static_cast<double>(num_tables)) : 0.0;
    m.effect_key = HashPair(key, 0x1000 + 2 * t);
    m.latent_key = HashPair(key, 0x1001 + 2 * t);
    m.in_pair = false;
    tables_.push_back(m);
  }
  for (const auto& [a, b] : pairs_) tables_[a].in_pair = tables_[b].in_pair = true;
  if (!pairs_.empty()) pair_weight_ = std::sqrt(pair_share / static_cast<double>(pairs_.size()));

  constexpr double kPi = 3.141592653589793;
  bias_ = std::log(options.base_ctr / (1.0 - options.base_ctr)) * std::sqrt(1.0 + kPi * variance / 8.0);
}

void GroundTruth::CenterTable(size_t t, std::span<const RowId> draws) {
  TableModel& m = tables_[t];
  m.effect_center = 0.0;
  std::fill(m.latent_center, m.latent_center + kLatentDim, 0.0);
  if (draws.empty() || m.weight == 0.0) return;
  double effect = 0.0;
  double latent[kLatentDim] = {};
  for (RowId row : draws) {
    effect += RowEffect(t, row) / m.weight;
    AddRowLatent(t, row, latent);
  }
  const double inv = 1.0 / static_cast<double>(draws.size());
  m.effect_center = effect * inv;
  for (int i = 0; i < kLatentDim; ++i) m.latent_center[i] = latent[i] * inv;
}

}  // namespace actorrec::data::gen
