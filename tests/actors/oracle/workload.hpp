// Synthetic global batches for the oracle's tests: small tables, chosen
// skews, a multi-hot table so that bags can be empty or repeat a row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "data/sample_block.hpp"

namespace actorrec::oracle::testing {

enum class Skew { kUniform, kZipf08, kZipf12, kTop1Percent90 };

inline const char* SkewName(Skew s) {
  switch (s) {
    case Skew::kUniform: return "uniform";
    case Skew::kZipf08: return "zipf 0.8";
    case Skew::kZipf12: return "zipf 1.2";
    case Skew::kTop1Percent90: return "90% in top 1%";
  }
  return "?";
}

// Draws row ids of one table with a skew; hot rows are scattered over the
// id space by a fixed permutation, as real preprocessed ids are.
class RowDraw {
 public:
  RowDraw(uint64_t rows, Skew skew, std::mt19937_64& rng) : rows_(rows), skew_(skew), perm_(rows) {
    std::iota(perm_.begin(), perm_.end(), 0u);
    std::shuffle(perm_.begin(), perm_.end(), rng);
    if (skew == Skew::kZipf08 || skew == Skew::kZipf12) {
      const double alpha = skew == Skew::kZipf08 ? 0.8 : 1.2;
      cdf_.resize(rows);
      double sum = 0;
      for (uint64_t k = 0; k < rows; ++k) cdf_[k] = sum += std::pow(double(k + 1), -alpha);
      for (double& c : cdf_) c /= sum;
    }
  }

  data::RowId operator()(std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    uint64_t rank = 0;
    switch (skew_) {
      case Skew::kUniform: rank = rng() % rows_; break;
      case Skew::kZipf08:
      case Skew::kZipf12:
        rank = std::min<uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u(rng)) - cdf_.begin(), rows_ - 1);
        break;
      case Skew::kTop1Percent90: {
        const uint64_t hot = std::max<uint64_t>(1, rows_ / 100);
        rank = u(rng) < 0.9 || hot == rows_ ? rng() % hot : hot + rng() % (rows_ - hot);
        break;
      }
    }
    return perm_[rank];
  }

 private:
  uint64_t rows_;
  Skew skew_;
  std::vector<data::RowId> perm_;
  std::vector<double> cdf_;
};

struct Workload {
  std::vector<uint64_t> table_rows;
  std::vector<data::SampleBlock> batches;
};

// `batches` global batches of `batch_size` samples over `table_rows`. Table 0
// is one-hot; the others get bags of 0 to 3 rows (duplicates possible).
inline Workload MakeWorkload(uint64_t seed, Skew skew, uint32_t batches, uint32_t batch_size,
                             std::vector<uint64_t> table_rows) {
  std::mt19937_64 rng(seed);
  Workload w;
  w.table_rows = std::move(table_rows);
  std::vector<RowDraw> draws;
  for (uint64_t rows : w.table_rows) draws.emplace_back(rows, skew, rng);
  for (uint32_t b = 0; b < batches; ++b) {
    data::SampleBlock block;
    block.Reset(0, w.table_rows.size());
    block.labels.assign(batch_size, 0.0f);
    for (size_t t = 0; t < w.table_rows.size(); ++t) {
      auto& kjt = block.tables[t];
      for (uint32_t i = 0; i < batch_size; ++i) {
        const uint32_t bag = t == 0 ? 1 : static_cast<uint32_t>(rng() % 4);
        for (uint32_t k = 0; k < bag; ++k) kjt.values.push_back(draws[t](rng));
        kjt.offsets.push_back(static_cast<uint32_t>(kjt.values.size()));
      }
    }
    w.batches.push_back(std::move(block));
  }
  return w;
}

// One-table batches whose sample i of batch b holds rows[b][i] (bags of one).
inline Workload Listed(uint64_t rows, const std::vector<std::vector<data::RowId>>& listed) {
  Workload w;
  w.table_rows = {rows};
  for (const auto& batch : listed) {
    data::SampleBlock block;
    block.Reset(0, 1);
    block.labels.assign(batch.size(), 0.0f);
    for (data::RowId r : batch) {
      block.tables[0].values.push_back(r);
      block.tables[0].offsets.push_back(static_cast<uint32_t>(block.tables[0].values.size()));
    }
    w.batches.push_back(std::move(block));
  }
  return w;
}

}  // namespace actorrec::oracle::testing
