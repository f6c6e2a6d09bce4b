// RunParts: the functional cores of one training run built from a config —
// the dataset's schema, the model spec, the row optimizer, W trainer cores
// (each with its backend and dense replica) and S embedding shard stores —
// and the evaluation of the held-out split. The drivers (LockstepRun,
// PipelineRun) differ only in how they move data between these parts.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "actors/embedding/shard_store.hpp"
#include "actors/oracle/direct_planner.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/sampler/batch_sequence.hpp"
#include "actors/trainer/trainer_core.hpp"
#include "configs/config.hpp"
#include "data/bad_record_tally.hpp"
#include "gpu/backend.hpp"
#include "gpu/backend_select.hpp"
#include "gpu/device_assignment.hpp"
#include "messages/rows_codec.hpp"
#include "models/model.hpp"
#include "models/optimizers.hpp"

namespace actorrec::trainer {

struct EvalReport {
  uint64_t samples = 0;
  double auc = 0.5, log_loss = 0.0, accuracy = 0.0;
  // Generated eval data only: the AUC of the generator's true click
  // probabilities on the same samples, the best any model can reach; NaN
  // for read data.
  double bayes_auc = std::numeric_limits<double>::quiet_NaN();
};

// What one embedding shard holds: rows created so far (lazily, as training
// touches them) and the bytes its arena and indexes take.
struct ShardUsage {
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

// The oracle's options for a run of `cfg` over tables of `table_rows` whose
// first batch is `first_batch`: every trainer rank of the cluster, one cache
// partition of training.cache_rows slots per trainer, the configured
// lookahead; private rows except in `replicated`, delayed sync except in
// `lrpp` and `replicated` (ARCHITECTURE §8). The modes without lookahead
// plan with DirectOptionsOf, but take the trainers, tables and first batch
// from these. InvalidArgument naming the training key that is out of range.
Result<oracle::PlannerOptions> PlannerOptionsOf(const config::Config& cfg, std::vector<uint64_t> table_rows,
                                                uint64_t first_batch);

// static_hot's cache: `staging` slots for a batch's rows that are not hot
// (enough for every row of any of the first kHotProbeBatches batches, hot
// or not, as DirectPlanner stages them, plus an eighth), and the rest of
// training.cache_rows for the most used rows of those batches (ties: the
// smaller (table, row)), resident, as a static cache is filled from a
// profiling pass: hot + staging = training.cache_rows, the budget of every
// other mode but ideal. A later batch that needs more staging fails naming
// training.cache_rows. `rows`: keys (table << 32 | row), ascending; both
// drivers give the i-th of them slot i. InvalidArgument naming
// training.cache_rows when a probe batch's rows alone do not fit.
inline constexpr uint64_t kHotProbeBatches = 64;
struct HotSet {
  std::vector<uint64_t> rows;
  uint32_t staging = 0;
};
Result<HotSet> HotRows(const config::Config& cfg);
std::string HotRowsReport(size_t hot_rows);

// The modes without lookahead (ideal, static_hot, no_cache) as the
// pipeline's oracle plans them (oracle/direct_planner.hpp): ideal keeps
// every row, static_hot HotRows(cfg), no_cache none; the rows of a batch
// that are not resident are staged in the rest of training.cache_rows
// (ideal: none; it holds every row, whatever cache_rows says).
// InvalidArgument for the lookahead modes and when ideal's rows are more
// than a cache can index.
Result<oracle::DirectOptions> DirectOptionsOf(const config::Config& cfg, std::vector<uint64_t> table_rows,
                                              uint64_t first_batch);
bool IsDirectMode(config::Mode mode);
// The slots every trainer's cache needs in a run of `cfg`: training.cache_rows,
// but for ideal, which holds every row.
uint64_t CacheSlotsOf(const config::Config& cfg, const std::vector<uint64_t>& table_rows);

// The digest of a run's parameters from its dense replica's digest and its
// shards' digests in shard order: what RunParts::ParameterDigest returns,
// computed where the parts are in other processes.
uint64_t CombineParameterDigest(uint64_t dense, const std::vector<uint64_t>& shard_digests);

struct RunParts {
  config::Config cfg;
  data::DatasetSchema schema;
  std::vector<uint64_t> table_rows;
  models::ModelSpec spec;
  std::unique_ptr<models::RowOptimizer> row_optimizer;
  gpu::BackendChoice backend;                            // training.backend, resolved
  std::vector<std::unique_ptr<gpu::Backend>> backends;  // one per hosted trainer, of that kind
  // Each hosted trainer's rank and CUDA device (training.devices,
  // gpu::AssignDevices), in rank order; empty on the CPU backend.
  std::vector<gpu::RankDevice> devices;
  // The trainers this process does not host share this CPU backend (their
  // dense replicas serve checkpoints, digests and the evaluation, and never
  // train); null when it hosts every trainer.
  std::unique_ptr<gpu::Backend> idle_backend;
  std::vector<std::unique_ptr<TrainerCore>> trainers;
  std::vector<std::unique_ptr<embedding::ShardStore>> shards;
  // What the training split's readers skipped (on_bad_record = "skip"),
  // every epoch's, wherever TrainSource()'s readers run in this process.
  std::shared_ptr<data::BadRecordTally> train_bad_records = std::make_shared<data::BadRecordTally>();

  // InvalidArgument / NotFound naming the config key or file (a backend
  // training.backend asks for that this build or machine lacks included).
  // hosted_trainers: the trainer ranks this process trains (a cluster
  // member's); null for all. Only they get a backend of training.backend's
  // kind (a CUDA stream set, cuBLAS handle and device buffers each).
  static Result<std::unique_ptr<RunParts>> Create(const config::Config& cfg,
                                                  const std::vector<uint32_t>* hosted_trainers = nullptr);

  uint32_t W() const { return static_cast<uint32_t>(trainers.size()); }
  uint32_t S() const { return static_cast<uint32_t>(shards.size()); }
  uint32_t T() const { return static_cast<uint32_t>(table_rows.size()); }
  // Row (t, r)'s initial value: embedding from (seed, t, r), fresh optimizer state.
  void InitRow(uint32_t t, uint64_t r, float* out) const;
  // The training split's batches, as the config orders them.
  BatchSequence::Options SequenceOptions() const;
  BatchSequence::SourceFactory TrainSource() const;

  // Scores the eval split (at most max_samples; 0 = all) with trainer 0's
  // dense replica. The latest values of a block's distinct rows come from
  // one call of latest(keys, out): row i of keys into out + i × row_floats
  // (one round trip per block where the rows are in other processes; EachRow
  // adapts a lookup of one row). scores, when given, sees each block of
  // samples with its logits (for `actorrec predict`); a non-ok Status from
  // it stops the evaluation.
  using LatestRows = std::function<Status(const wire::RowKeys& keys, float* out)>;
  using ScoreSink = std::function<Status(const data::SampleBlock& block, const std::vector<float>& logits)>;
  Result<EvalReport> Evaluate(uint64_t max_samples, const LatestRows& latest, const ScoreSink& scores = nullptr);
  LatestRows EachRow(std::function<Status(uint32_t t, data::RowId r, float* out)> one) const;

  // Dense parameters (every replica must equal trainer 0's: checked) and
  // every shard's rows, hashed: equal digests mean bitwise equal parameters.
  uint64_t ParameterDigest() const;
  // Per shard, read from the stores directly (the caller owns the quiet run).
  std::vector<ShardUsage> ShardUsages() const;

 private:
  RunParts() = default;
};

}  // namespace actorrec::trainer
