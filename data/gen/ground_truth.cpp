// Weights and shapes of the hidden label model, all derived from the seed.
#include "data/gen/ground_truth.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::data::gen {
namespace {

// P(ByteSum(x) = level) for a uniform 32-bit x: four 8-bit uniforms
// convolved, exactly (the counts fit a double's mantissa).
std::vector<double> ByteSumMass() {
  std::vector<double> mass(1, 1.0);
  for (int byte = 0; byte < 4; ++byte) {
    std::vector<double> next(mass.size() + 255, 0.0);
    for (size_t s = 0; s < mass.size(); ++s) {
      for (size_t b = 0; b < 256; ++b) next[s + b] += mass[s];
    }
    mass = std::move(next);
  }
  for (double& m : mass) m *= 0x1.0p-32;
  return mass;
}

}  // namespace

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
  const std::vector<double> level_mass = ByteSumMass();
  for (uint32_t j = 0; j < options.num_dense; ++j) {
    const uint64_t h = HashPair(key, j);
    const double sign = (h & 1) ? 1.0 : -1.0;
    DenseShape d;
    d.weight = sign * std::sqrt(dense_share / options.num_dense);
    d.mu = 3.0 * ToUnit(Mix64(h));         // median count between 1 and 20
    d.s = 0.5 + ToUnit(Mix64(h + 1));      // spread of the log-count
    for (uint32_t level = 0; level < kNormalLevels; ++level)
      dense_values_.push_back(static_cast<float>(std::log1p(std::floor(std::exp(d.mu + d.s * NormalOfLevel(level))))));
    // E[z | x]: the stored value is monotone in the level, so the levels
    // that store one value are a run; average z over it, weighted by how
    // often ByteSum gives each level.
    const float* values = dense_values_.data() + size_t{j} * kNormalLevels;
    for (uint32_t begin = 0; begin < kNormalLevels;) {
      uint32_t end = begin;
      double mass = 0.0, sum = 0.0;
      for (; end < kNormalLevels && values[end] == values[begin]; ++end) {
        mass += level_mass[end];
        sum += level_mass[end] * NormalOfLevel(end);
      }
      for (uint32_t level = begin; level < end; ++level) dense_effects_.push_back(d.weight * sum / mass);
      begin = end;
    }
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
