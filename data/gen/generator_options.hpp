// GeneratorOptions: everything that defines a synthetic dataset. Two runs with
// equal options produce identical samples (the thread count excepted, which
// changes only the speed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data::gen {

// How often each row of a table is accessed, by popularity rank (rank 0 is
// the hottest). Ranks become row ids through a fixed pseudo-random bijection,
// so hot rows are spread over the table as they are after hashing.
struct AccessDistribution {
  enum class Kind {
    kUniform,
    kZipf,         // P(rank r) ~ (r + 1)^-alpha
    kTopShare,     // the top `hot_fraction` of rows take `hot_share` of accesses, both parts uniform
    kHalfNormal,   // rank = floor(|N(0, 1)| * sigma * rows), truncated to the table
    kExponential,  // rank / rows ~ Exp(lambda), truncated to [0, 1)
  };
  Kind kind = Kind::kUniform;
  double alpha = 1.0;         // kZipf: > 0
  double hot_fraction = 0.01; // kTopShare: in (0, 1]
  double hot_share = 0.9;     // kTopShare: in [0, 1]
  double sigma = 0.1;         // kHalfNormal: in (0, 10], a fraction of the rows
  double lambda = 10.0;       // kExponential: > 0, per fraction of the rows

  static AccessDistribution Uniform() { return {}; }
  static AccessDistribution Zipf(double alpha);
  // "The top p of rows take X of accesses, the rest uniform": Bagpipe's skew sweep.
  static AccessDistribution TopShare(double hot_fraction, double hot_share);
  static AccessDistribution HalfNormal(double sigma);
  static AccessDistribution Exponential(double lambda);
};

// How many ids a sample's bag holds.
struct BagLength {
  enum class Kind {
    kFixed,      // always `min` (<= 1e4)
    kUniform,    // uniform on [min, max] (max <= 1e4)
    kGeometric,  // on {1, 2, ...} with mean `mean` in [1, 1e4]: never empty
    kPoisson,    // on {0, 1, ...} with mean `mean` (<= 500): empty bags happen, as for missing multi-hot values
  };
  Kind kind = Kind::kFixed;
  uint32_t min = 1;
  uint32_t max = 1;
  double mean = 1.0;

  static BagLength Fixed(uint32_t k) { return {Kind::kFixed, k, k, static_cast<double>(k)}; }
  static BagLength Uniform(uint32_t a, uint32_t b) { return {Kind::kUniform, a, b, 0.5 * (static_cast<double>(a) + static_cast<double>(b))}; }
  static BagLength Geometric(double mean) { return {Kind::kGeometric, 1, 0, mean}; }
  static BagLength Poisson(double mean) { return {Kind::kPoisson, 0, 0, mean}; }
  // The expected length before any capping at the table size (see distinct_ids).
  double Mean() const { return mean; }
};

struct TableOptions {
  std::string name;
  uint64_t rows = 2;
  AccessDistribution access;
  BagLength bag;
  // false: a bag's ids are independent draws and may repeat (as in TorchRec's
  // random data); true: repeats are redrawn, and a bag longer than the table
  // is cut to the table's size.
  bool distinct_ids = false;
  // RecD's session duplication: within a session, the probability that this
  // feature keeps the previous sample's bag. User-like features ~0.9,
  // item-like ~0.1; 0 makes every sample independent.
  double session_dup_prob = 0.0;
};

struct GeneratorOptions {
  // The world: the hidden label model, each table's hot rows and everything
  // but the samples themselves.
  uint64_t seed = 1;
  // Which sample stream of that world: 0 for training, another value for a
  // held-out split, whose samples are new but labelled by the same model and
  // drawn from the same hot rows (so a model trained on stream 0 can be
  // evaluated on it).
  uint64_t stream = 0;
  uint64_t samples = 1'000'000;
  uint32_t num_dense = 13;
  // Consecutive groups of this many samples form a session (1: no sessions).
  uint32_t session_length = 1;
  // Within a session, the probability that a sample keeps the previous
  // sample's dense features (a user's own features); 0: drawn every sample.
  double session_dense_dup_prob = 0.0;
  std::vector<TableOptions> tables;

  // The hidden label model (see ground_truth.hpp). `base_ctr` is the mean
  // click rate, to a few percent (0.251 measured for 0.25 on the Criteo
  // preset); `signal` scales the logit's spread: 1.0 gives a Bayes-optimal
  // AUC near 0.8 on the Criteo preset, 0 gives labels that no model can
  // predict (AUC 0.5).
  double base_ctr = 0.25;
  double signal = 1.0;

  // Worker threads for generation; the samples do not depend on it.
  uint32_t threads = 1;
  // The Bayes-optimal AUC is computed exactly over the first this many
  // samples read (8 bytes each: 16 Mi samples cost 128 MiB); 0 turns it off.
  uint64_t auc_sample_cap = uint64_t{1} << 24;

  // The per-table session duplication probabilities, for the RecD model in
  // the statistics.
  std::vector<double> SessionDupProbs() const;
};

// The 26 tables of Criteo Kaggle (Display Advertising Challenge), 33.76 M
// rows, 13 dense features, single-hot, no sessions, 45,840,617 samples as in
// train.txt. `row_scale` multiplies every cardinality (at least 2 rows each),
// for small runs of the same shape. Every table gets Zipf(1.05): Criteo's
// large tables are heavily skewed; 1.05 puts ~80 % of a 10 M-row table's
// accesses on its top 1 % of rows.
GeneratorOptions CriteoKaggleOptions(double row_scale = 1.0);

// The cardinalities of Criteo Kaggle's C1..C26, in order.
const std::vector<uint64_t>& CriteoKaggleRows();

// InvalidArgument naming the first option out of range, else OK.
Status Validate(const GeneratorOptions& options);

// Dense features "I1".."In" and the tables, as readers of real data name them.
DatasetSchema SchemaOf(const GeneratorOptions& options);

}  // namespace actorrec::data::gen
