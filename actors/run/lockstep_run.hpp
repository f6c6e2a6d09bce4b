// LockstepRun: a whole training run of one config (sampler, oracle,
// embedding shards, W trainers with their caches, the sync of dense and
// sparse gradients) driven batch by batch from one thread, the trainers'
// forward and backward in parallel.
//
// It executes the modes of ARCHITECTURE §8 with the same cores the actors
// use (Planner, ShardStore, TrainerCore, row_sync.hpp), in the order the
// consistency rule allows, so its results are what the actor pipeline must
// reproduce bit for bit:
//   planned modes (lrpp_delayed, lrpp, replicated): the oracle's plans —
//     prefetch into slots, private rows updated by their owner, critical and
//     delayed rows summed over trainers in rank order and applied by every
//     cache, evictions written back by their writer;
//   direct modes (no_cache, static_hot, ideal): rows resident in every
//     trainer (ideal: all; static_hot: a hot set chosen from the first
//     batches; no_cache: none) are summed and applied by every replica; every
//     other row is fetched for the batch and its summed gradient is applied
//     by its shard.
// In lockstep nothing overlaps, so delayed sync and prefetch distance show
// here only as counts, not as time: the actor pipeline is where they pay.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/embedding/shard_store.hpp"
#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/plan_maker.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/sampler/batch_sequence.hpp"
#include "actors/run/checkpoint.hpp"
#include "actors/run/run_parts.hpp"
#include "actors/common/step_report.hpp"
#include "actors/trainer/trainer_core.hpp"
#include "configs/config.hpp"
#include "models/metrics.hpp"

namespace actorrec::trainer {

class LockstepRun {
 public:
  // InvalidArgument / NotFound naming the config key or file when the run
  // cannot start (the dataset, the model shape, the cache capacity).
  static Result<std::unique_ptr<LockstepRun>> Create(const config::Config& cfg);
  // The planned modes' planner for the run's options: a Planner, or for
  // tests of the oracle's variants another PlanMaker (a SplitPlanner over
  // cache partitions whose slots add up to training.cache_rows).
  using PlannerFactory = std::function<std::unique_ptr<oracle::PlanMaker>(const oracle::PlannerOptions&)>;
  static Result<std::unique_ptr<LockstepRun>> Create(const config::Config& cfg, const PlannerFactory& make_planner);
  // A run over given parts (a resumed checkpoint's) that starts at `start`
  // in the data, `first_batch` global batches into the run, every cache empty.
  static Result<std::unique_ptr<LockstepRun>> Create(std::unique_ptr<RunParts> parts, BatchPosition start,
                                                     uint64_t first_batch, const PlannerFactory& make_planner = {});
  ~LockstepRun();

  // Trains the next global batch into *report. Ok(false) once every batch
  // of the run (training.epochs, training.max_batches) is done.
  Result<bool> Step(StepReport* report);

  // Writes every row still held by a trainer back to its shard: after it
  // the shards hold every touched row's latest value. Call once, at the end.
  Status Finish();

  // Between batches: saves the run's state after the batches done so far
  // (checkpoint.hpp), first copying the rows trainers hold into the shards.
  Status SaveCheckpoint(const std::string& dir);
  // A run of `cfg` continuing from the newest checkpoint in `dir`.
  static Result<std::unique_ptr<LockstepRun>> Resume(const config::Config& cfg, const std::string& dir);
  uint64_t first_batch() const { return first_batch_; }

  // Scores the eval split (at most max_samples; 0 = all) with the current
  // parameters: trainer 0's dense replica and each row's latest value.
  Result<EvalReport> Evaluate(uint64_t max_samples);

  // Dense parameters (all replicas must be equal: checked) and every shard's
  // rows, hashed: equal digests mean bitwise equal parameters.
  uint64_t ParameterDigest() const;
  Result<std::vector<ShardUsage>> ShardUsages() const { return parts_->ShardUsages(); }
  // The dense parameters of trainer w, and the shards (for tests and checkpoints).
  std::span<const float> dense_params(uint32_t w) const;
  const embedding::ShardStore& shard(uint32_t s) const { return *parts_->shards[s]; }

  uint32_t trainers() const { return static_cast<uint32_t>(parts_->trainers.size()); }
  uint32_t shards() const { return static_cast<uint32_t>(parts_->shards.size()); }
  uint32_t lookahead() const { return planner_ ? planner_->lookahead() : 0; }
  const std::string& lookahead_report() const;
  const data::DatasetSchema& schema() const { return parts_->schema; }
  uint64_t row_bytes() const;
  // What the training data's readers skipped so far (on_bad_record = "skip").
  data::BadRecords skipped_records() const { return parts_->train_bad_records->Get(); }

 private:
  LockstepRun() = default;

  struct Location {
    uint32_t owner;  // the trainer holding a private row, or kEveryTrainer
    uint32_t slot;
  };
  static constexpr uint32_t kEveryTrainer = 0xffffffffu;
  static uint64_t Key(uint32_t t, data::RowId r) { return (uint64_t{t} << 32) | r; }

  bool planned() const { return planner_ != nullptr; }
  Result<bool> StepPlanned(StepReport* report);
  Result<bool> StepDirect(StepReport* report);
  // Whether a next planned batch exists, feeding the planner as needed.
  Result<bool> FeedPlanner();
  Status ChooseHotRows(const config::Config& cfg);
  // Runs the W trainers' forward and backward passes on their slices of
  // `batch`, in parallel; returns the losses' sum and sets the report's
  // forward_s and backward_s (the slowest trainer's).
  // features[w] and groups[w]: trainer w's features and dedup groups.
  double ComputeAll(const data::Batch& batch, const std::vector<const std::vector<oracle::TableFeatures>*>& features,
                    const std::vector<const std::vector<oracle::BagGroup>*>& groups, StepReport* report);
  void SyncDense();
  // Fetches rows (table, row, slot) from the shards into the given trainers' slots.
  Status FetchInto(const std::vector<oracle::RowSlot>& rows, const std::vector<uint32_t>& to_trainers);
  Status StoreFrom(uint32_t trainer, const std::vector<oracle::RowSlot>& rows);
  Status LoadResident(uint32_t t, uint64_t r, float* out) const;
  // Copies every row a trainer holds into its shard (the shards then hold
  // every row's latest value); the run goes on unchanged.
  Status FlushHeldRows();
  // The latest value of a row a trainer holds (cache, hot set, replica) into
  // out (row_floats); false when no trainer holds it.
  bool ReadHeldRow(uint32_t t, data::RowId r, float* out);

  std::unique_ptr<RunParts> parts_;
  RunPosition position_;     // batches done and the next batch's place in the data
  uint64_t first_batch_ = 0;
  config::Mode mode_ = config::Mode::kLrppDelayed;
  std::unique_ptr<BatchSequence> sequence_;
  std::unique_ptr<oracle::BatchRowsBuilder> builder_;
  bool data_done_ = false;

  // Planned modes.
  std::unique_ptr<oracle::PlanMaker> planner_;
  std::deque<data::Batch> pending_;  // pushed to the planner, not yet trained
  oracle::BatchPlan plan_;
  std::unordered_map<uint64_t, Location> location_;  // cached rows, for evaluation

  // Direct modes: rows resident in every trainer (slot < resident_slots_).
  uint32_t resident_slots_ = 0;
  std::vector<uint64_t> table_base_;                   // ideal: slot = table_base_[t] + r
  std::unordered_map<uint64_t, uint32_t> hot_slot_;    // static_hot
  std::vector<uint8_t> resident_touched_;
  oracle::BatchRows rows_;
  std::vector<std::vector<oracle::TableFeatures>> direct_features_;  // per trainer
  std::vector<std::vector<oracle::BagGroup>> direct_groups_;         // per trainer
  std::vector<std::vector<oracle::RowSlot>> staged_;                 // per trainer

  std::vector<float> dense_sum_;
  std::vector<float> row_sums_;
  std::unordered_map<uint64_t, uint32_t> sum_index_;
  std::vector<uint64_t> sum_keys_;
  std::vector<data::SampleBlock> slices_;
  std::string lookahead_report_;
};

}  // namespace actorrec::trainer
