// PipelineRun: a whole training run as actors in one process — batch_sampler,
// oracle, embedding shards, and per trainer a trainer, a cache partition and
// a sync scheduler (Gloo) — exchanging the Cap'n Proto messages of
// messages/*.capnp. The run's thread drives it through a scoped actor that
// collects what the trainers report.
//
// It runs every mode: the oracle plans lrpp_delayed, lrpp and replicated
// with lookahead, and ideal, static_hot and no_cache directly
// (oracle/direct_planner.hpp), in the same plan format. Overlap is
// real here: partitions prefetch later batches' rows while a batch computes
// (shards hold each fetch until its barrier holds), delayed sync runs in the
// scheduler while the next batch computes, and write-backs go out in the
// background. Results equal LockstepRun's bit for bit (tests).
//
// Pauses: with Options::pause_every = P, the oracle plans nothing after
// batches P−1, 2P−1, … until Step() is called past them, so after Step()
// returns such a batch the run goes quiet there: Evaluate() and
// ParameterDigest() may be called then, and after Finish().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/run/pipeline_host.hpp"
#include "actors/run/run_parts.hpp"
#include "actors/common/step_report.hpp"
#include "actors/trainer/trainer_actor.hpp"
#include "configs/config.hpp"

namespace caf {
class actor_system;
class actor_system_config;
class scoped_actor;
}  // namespace caf

namespace actorrec {
class InProcessControl;
}  // namespace actorrec

namespace actorrec::trainer {

class PipelineRun {
 public:
  struct Options {
    uint64_t pause_every = 0;  // 0: no pauses before the end
    uint32_t plans_ahead = 4;  // batches a trainer may hold planned (prefetch distance)
    // A run that reports nothing for this long is stalled: Step() fails
    // naming what it waits for.
    double stall_seconds = 300;
    // A checkpoint directory to resume from (checkpoint.hpp); empty: a fresh run.
    std::string resume_dir;
    // The trainers of a one-process run sum through shared memory; true
    // makes them use Gloo over loopback TCP, as ranks in other processes do
    // (the same sums: tests compare the two).
    bool gloo_in_process = false;
  };

  // Whatever RunParts::Create refuses, and the training keys the oracle's
  // options refuse (PlannerOptionsOf, DirectOptionsOf), named.
  static Result<std::unique_ptr<PipelineRun>> Create(const config::Config& cfg, Options options);
  static Result<std::unique_ptr<PipelineRun>> Create(const config::Config& cfg) { return Create(cfg, Options{}); }
  // The coordinator of a cluster run (`actorrec node` on cluster.coordinator):
  // hosts its member's actors in `seat.sys`, publishes the run's driver and
  // the Gloo rendezvous with the supervisor, finds every other actor through
  // it (the other members run MemberPipeline) and drives the whole run.
  // Evaluation and checkpoints are NotSupported here (the cached rows are in
  // the trainers' processes); so is resuming. Stop the control plane before
  // destroying it (TrainOptions::before_teardown), or the supervisor takes
  // its actors' ending for a failure.
  static Result<std::unique_ptr<PipelineRun>> CreateCoordinator(const config::Config& cfg, Options options,
                                                                 const ClusterSeat& seat);
  // Stops the control plane, if started, then every actor.
  ~PipelineRun();

  // Starts the control plane of `cfg.cluster` in this run's actor system
  // (actors/node/runtime.hpp, InProcessControl): its nodes register this
  // run's sampler, oracle, shards, cache partitions, trainers and sync
  // schedulers with the supervisor, which monitors them, and the inspector
  // lists them; prints them to `out`. Unavailable when the cluster does not
  // come up within cluster.join_timeout_ms.
  Status StartControlPlane(const config::Config& cfg, std::ostream& out);

  // Fault injection for tests and drills: kills the actor `name`
  // ("trainer[1]", "oracle", the names StartControlPlane prints) as a crash
  // would. The run then fails promptly, naming it. NotFound for no such actor.
  Status InjectActorFailure(const std::string& name);

  // The next global batch, once every trainer has settled it. Ok(false)
  // after the last one. InvalidArgument when a config key stopped the run
  // (the cache too small for the data), as the lockstep driver reports it.
  Result<bool> Step(StepReport* report);
  // Stops the run at a batch boundary (a stop signal): the oracle plans no
  // batch beyond those it already sent, Step() returns them and then false,
  // and the run is quiet there, so SaveCheckpoint() may be called. A run
  // stopped this way is not finished (no Finish()).
  Status StopAfterPlanned();
  // Waits until every write-back of every batch is acknowledged: the shards
  // then hold every row's latest value. Call after Step() returned false.
  Status Finish();
  // At a pause point or after Finish(): scores the eval split with trainer
  // 0's dense replica and each row's latest value (a cache holding it, else
  // its shard), both asked of the actors (dense_atom, peek_atom), so that a
  // cluster run evaluates on its coordinator like a one-process run.
  Result<EvalReport> Evaluate(uint64_t max_samples);
  // At a pause point or after Finish(); see RunParts::ParameterDigest.
  Result<uint64_t> ParameterDigest();
  // At a pause point or after Finish(): copies the rows the caches hold into
  // their shards and saves the run's state after the last batch Step()
  // returned (checkpoint.hpp).
  Status SaveCheckpoint(const std::string& dir);
  // Asks each embedding shard actor what it holds (at any time: the
  // answer is the shard's own count when the message reaches it).
  // Unavailable naming the shard that does not answer.
  Result<std::vector<ShardUsage>> ShardUsages();
  // The oracle's statistics of the plans it has sent so far (PlanStats:
  // occupancy, unique rows, cache share, prefetch, private / critical /
  // delayed rows and bytes): a one-line summary and its JSON object.
  struct PlanReport {
    std::string summary, json;
  };
  Result<PlanReport> OracleStats();
  // Global batches before this run's first (a resumed run's position).
  int64_t first_batch() const { return first_batch_; }
  // The planned names of the run's actors ("oracle", "trainer[1]"), sorted.
  std::vector<std::string> actor_names() const;
  // The message counters of the actors this process hosts (actor_meter.hpp).
  std::vector<NamedMeter> actor_meters() const;

  uint32_t trainers() const { return parts_->W(); }
  uint32_t shards() const { return parts_->S(); }
  // Slots of each trainer's cache.
  uint64_t cache_slots() const { return CacheSlotsOf(parts_->cfg, parts_->table_rows); }
  const std::string& lookahead_report() const { return lookahead_report_; }
  // When the run's actors were told to start: they work from then on,
  // before the first Step() (steady clock).
  std::chrono::steady_clock::time_point started_at() const { return started_at_; }
  const data::DatasetSchema& schema() const { return parts_->schema; }
  uint64_t row_bytes() const { return uint64_t{parts_->row_optimizer->row_floats()} * sizeof(float); }
  // What the training data's readers skipped so far (on_bad_record =
  // "skip"); only this process's sampler is counted.
  data::BadRecords skipped_records() const { return parts_->train_bad_records->Get(); }

 private:
  PipelineRun() = default;
  struct Pending {
    uint32_t reports = 0;
    StepReport step;
  };
  // Handles one message for the driver, or times out (a stall).
  Status ReceiveOne(const std::string& waiting_for);
  // Waits until every trainer's write-backs through `batch` are acknowledged.
  Status WaitAcked(int64_t batch);
  // True at a pause point (or after Finish): nothing is in flight.
  Status CheckQuiet(const char* what) const;
  std::string Progress() const;
  // The run's failure, error_, as a Status.
  Status Failure() const;
  // Starts the driver (publish_driver makes it findable), hosts `hosted`,
  // finds every actor of the run and starts it.
  Status Launch(const config::Config& cfg, const RunPosition& start, std::vector<PlannedActor> hosted,
                PipelineDirectory directory, const std::function<void(const caf::actor&)>& publish_driver);
  // The latest values of `keys` into out (RunParts::LatestRows), asked of
  // the trainer and shard actors.
  Status PeekRows(const wire::RowKeys& keys, float* out);
  // A cluster's coordinator: trainer 0's dense parameters and optimizer
  // state into this process's trainer core (the scorer and the checkpoint's
  // source). Nothing to do in one process.
  Status FetchDense();
  // The rows the trainers' caches hold into their shards (checkpoints).
  Status FlushCaches();
  // A cluster whose snapshots are kept in memory (ClusterSeat::
  // snapshot_store): the snapshot after the last batch written through
  // every member's keeper (snapshot_keeper.hpp) and committed, this
  // member's last.
  Status SaveToKeepers(const RunPosition& position);
  // Every row trainer w's cache holds, asked of its actor: *rows reads from
  // *frame, which must outlive it.
  Status CachedRowsOf(uint32_t w, wire::Frame<wire::Rows>* frame, wire::RowPayload* rows);

  std::unique_ptr<RunParts> parts_;
  Options options_;
  bool cluster_ = false;
  std::unique_ptr<caf::actor_system_config> system_config_;
  std::unique_ptr<caf::actor_system> owned_system_;  // null in a cluster: the process's system
  caf::actor_system* system_ = nullptr;
  std::unique_ptr<caf::scoped_actor> driver_;
  std::unique_ptr<PipelineHost> host_;  // the actors this process runs
  caf::actor rendezvous_;               // a cluster coordinator's Gloo rendezvous
  caf::actor supervisor_;               // a cluster coordinator's: told each completed batch
  // Every actor of the run, here or in other processes.
  caf::actor oracle_, sampler_;
  std::vector<caf::actor> shard_actors_;
  std::vector<caf::actor> trainer_actors_, partition_actors_, scheduler_actors_;  // per trainer
  std::map<caf::actor_addr, std::string> actor_names_;  // every actor of the run, by its planned name
  std::unique_ptr<InProcessControl> control_;
  // Snapshots in memory (SaveToKeepers): this member, the topology, the
  // keepers by member (found on the first snapshot) and how to find them.
  std::string member_;
  config::ClusterConfig cluster_config_;
  caf::actor keeper_;  // this member's
  std::map<std::string, caf::actor> keepers_;
  std::function<Result<std::vector<caf::actor>>(const std::vector<std::string>&)> lookup_;

  int64_t first_batch_ = 0;
  int64_t next_report_ = 0;  // the batch Step() returns next
  BatchPosition next_data_;  // where that batch is in the data
  int64_t hold_ = INT64_MAX;
  bool stopping_ = false;  // StopAfterPlanned(): the run ends after batch hold_
  int64_t end_ = -1;         // batches in the run, once the oracle knows
  std::vector<int64_t> acked_;  // per trainer: batches whose write-backs are all acknowledged
  std::map<int64_t, Pending> pending_;
  std::map<int64_t, std::vector<double>> losses_;  // per batch, per trainer
  std::string error_;
  bool config_error_ = false;  // error_ came from a config key: InvalidArgument, not Unavailable
  bool finished_ = false;
  std::string lookahead_report_;
  std::chrono::steady_clock::time_point started_at_{};
};

// A cluster member other than the coordinator: builds the run's parts and
// hosts the member's actors (PipelineHost over ClusterDirectory) until
// destroyed; the coordinator's PipelineRun drives them. With resume_dir the
// member starts where that checkpoint ends, its shards and dense replicas
// loaded from it (every member must be given the same directory: the
// coordinator checks). With seat.snapshot_store the snapshot the
// coordinator's keeper names comes first (RestoreFromKeepers).
// The coordinator's snapshot to resume from, with seat.snapshot_store:
// its own store's newest, or where its store names none (its agent was lost
// too and started again by hand) the newest one it committed as the other
// members' keepers recorded it, fetched from them
// (RestoreCoordinatorFromKeepers). "" when there is none: a fresh run. Call
// it before CreateCoordinator (which publishes the coordinator's keeper).
Result<std::string> RestoreCoordinatorSnapshot(const config::Config& cfg, const ClusterSeat& seat);

class MemberPipeline {
 public:
  static Result<std::unique_ptr<MemberPipeline>> Start(const config::Config& cfg, const ClusterSeat& seat,
                                                       const std::string& resume_dir = "");
  ~MemberPipeline();

 private:
  MemberPipeline() = default;
  caf::actor keeper_;  // with ClusterSeat::snapshot_store
  std::unique_ptr<RunParts> parts_;
  std::unique_ptr<PipelineHost> host_;
};

}  // namespace actorrec::trainer
