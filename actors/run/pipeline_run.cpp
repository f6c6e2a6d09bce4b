// PipelineRun and MemberPipeline (pipeline_run.hpp): the driver of the actor
// pipeline. Kept whole: the run's lifecycle (Create, Launch, Step, Finish)
// and its queries of the actors' state (dense replica, cached rows,
// checkpoints, digests, statistics) share the driver's actor handles, its
// waiting and its error reporting. If it grows, the queries (FetchDense to
// OracleStats) are the part to move to a file of their own.
#include "actors/run/pipeline_run.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <tuple>
#include <unordered_set>

#include "actors/common/ask.hpp"
#include "actors/common/atoms.hpp"
#include "actors/embedding/shard_store.hpp"
#include "actors/node/runtime.hpp"
#include "actors/oracle/oracle_actor.hpp"
#include "actors/run/checkpoint.hpp"
#include "actors/run/rendezvous.hpp"
#include "actors/run/snapshot_keeper.hpp"
#include "gpu/gloo_collective.hpp"
#include "messages/registry.hpp"

namespace actorrec::trainer {
namespace {

// How long a cluster process waits for its actors to end at the stop.
constexpr std::chrono::milliseconds kMemberStopWait{2000};

// How long the driver waits for an actor's answer: a minute, and for a
// checkpoint's rows and files (gigabytes at full scale) an hour.
constexpr std::chrono::seconds kAnswerWait{60};
constexpr std::chrono::seconds kCheckpointWait{3600};

// AskAndWait, with `who` in the error.
template <class OnAnswer, class... Args>
Status AskWithin(std::chrono::seconds wait, caf::actor_system& sys, const caf::actor& a, const std::string& who,
                 OnAnswer on_answer, Args&&... args) {
  Status st = AskAndWait(sys, a, wait, on_answer, std::forward<Args>(args)...);
  return st.ok() ? st : Status::Unavailable(who + ": " + st.message());
}

template <class OnAnswer, class... Args>
Status Ask(caf::actor_system& sys, const caf::actor& a, const std::string& who, OnAnswer on_answer, Args&&... args) {
  return AskWithin(kAnswerWait, sys, a, who, on_answer, std::forward<Args>(args)...);
}

// A cluster member resuming from `dir`: the checkpoint's dense state into
// its trainer cores and the shards it hosts; the run's position. The
// position at batch 0 when dir is empty.
Result<RunPosition> ResumeMember(const std::string& dir, const std::vector<PlannedActor>& hosted, RunParts* parts) {
  if (dir.empty()) return RunPosition{};
  std::vector<bool> shards(parts->S(), false);
  for (const PlannedActor& a : hosted) {
    if (a.role == wire::Role::EMBEDDING && a.index < shards.size()) shards[a.index] = true;
  }
  return LoadRunCheckpoint(dir, parts, &shards);
}

// The snapshot pieces a member needs to resume: the dense state and the
// files of the shards it hosts.
std::vector<std::string> PiecesOf(const std::vector<PlannedActor>& hosted, uint32_t S) {
  std::vector<std::string> pieces = {kDensePiece};
  for (const PlannedActor& a : hosted) {
    if (a.role == wire::Role::EMBEDDING) pieces.push_back(ShardCheckpointFile(a.index, S));
  }
  return pieces;
}

// Starts this member's snapshot keeper, when snapshots are kept in memory,
// and makes it findable.
caf::actor StartKeeper(const ClusterSeat& seat) {
  if (seat.snapshot_store.empty()) return {};
  caf::actor keeper = SpawnSnapshotKeeper(*seat.sys, seat.snapshot_store);
  caf::anon_send(seat.supervisor, publish_atom::value, KeeperName(seat.member), keeper);
  return keeper;
}

// The trainer ranks among a member's actors: the ones its RunParts gives a
// backend of training.backend's kind.
std::vector<uint32_t> TrainersOf(const std::vector<PlannedActor>& actors) {
  std::vector<uint32_t> trainers;
  for (const PlannedActor& a : actors) {
    if (a.role == wire::Role::TRAINER) trainers.push_back(a.index);
  }
  return trainers;
}

// Gloo groups of one process need distinct key prefixes in their store.
std::string NextGroupPrefix() {
  static std::atomic<uint64_t> runs{0};
  return "pipeline-" + std::to_string(::getpid()) + "-" + std::to_string(runs++);
}

// One trainer's figures from what it reported with a settled batch (sizes checked).
TrainerFigures FiguresOf(const std::vector<double>& times, const std::vector<uint64_t>& counts) {
  TrainerFigures f;
  f.rows = counts[kRows];
  f.read_misses = counts[kReadMisses];
  f.fetched = counts[kPrefetched];
  f.private_misses = counts[kPrivateMisses];
  f.private_rows = counts[kPrivateUpdated];
  f.critical = counts[kCritical];
  f.delayed = counts[kDelayed];
  f.evictions = counts[kEvictions];
  f.written = counts[kWritten];
  f.sync_floats = counts[kSyncFloats];
  f.occupancy = static_cast<uint32_t>(counts[kOccupancy]);
  f.lookahead = static_cast<uint32_t>(counts[kLookahead]);
  f.wait_rows_s = times[kWaitRows];
  f.forward_s = times[kForward];
  f.backward_s = times[kBackward];
  f.critical_sync_s = times[kCriticalSync];
  f.exposed_delayed_s = times[kExposedDelayed];
  f.apply_s = times[kApply];
  f.delayed_sync_s = times[kDelayedSync];
  f.stream_wait_rows_s = times[kStreamWaitRows];
  f.stream_wait_sync_s = times[kStreamWaitSync];
  return f;
}

}  // namespace

Result<std::unique_ptr<PipelineRun>> PipelineRun::Create(const config::Config& cfg, Options options) {
  auto parts = RunParts::Create(cfg);
  if (!parts.ok()) return parts.status();
  std::unique_ptr<PipelineRun> run(new PipelineRun());
  run->parts_ = std::move(parts).value();
  run->options_ = options;
  RunPosition start;
  if (!options.resume_dir.empty()) {
    auto resumed = LoadRunCheckpoint(options.resume_dir, run->parts_.get());
    if (!resumed.ok()) return resumed.status();
    start = *resumed;
  }
  run->system_config_ = std::make_unique<caf::actor_system_config>();
  wire::AddMessageTypes(*run->system_config_);
  // Trainers and schedulers are detached threads; the pooled actors (oracle,
  // partitions, shards, sampler) wait on a shared queue instead of polling,
  // so idle workers leave the cores to the trainers' compute.
  run->system_config_->set("scheduler.policy", caf::atom("sharing"));
  run->owned_system_ = std::make_unique<caf::actor_system>(*run->system_config_);
  run->system_ = run->owned_system_.get();
  // Every actor in this process: the directory is a map, and spawning in
  // PipelineHost's order finds every name already there.
  auto local = std::make_shared<std::map<std::string, caf::actor>>();
  PipelineDirectory directory;
  directory.lookup = [local](const std::vector<std::string>& names) -> Result<std::vector<caf::actor>> {
    std::vector<caf::actor> found;
    for (const auto& name : names) {
      auto it = local->find(name);
      if (it == local->end()) return Status::NotFound("no actor " + name + " in this process");
      found.push_back(it->second);
    }
    return found;
  };
  directory.publish = [local](const PlannedActor& planned, const caf::actor& actor) { (*local)[planned.name] = actor; };
  directory.gloo_store = gpu::MakeInProcessStore();
  directory.gloo_prefix = NextGroupPrefix();
  if (!options.gloo_in_process) {
    directory.shared_memory = std::make_shared<gpu::SharedMemoryGroup>(run->parts_->W(), gpu::GlooOptions{}.timeout);
  }
  if (cfg.cluster.collective == "nccl" || cfg.cluster.collective == "auto") {  // trainers on GPUs of their own
    directory.nccl = cfg.cluster.collective;
    directory.config_path = cfg.path;
  }
  if (Status st = run->Launch(cfg, start, ActorsOf(cfg.cluster), std::move(directory),
                              [&](const caf::actor& driver) { (*local)[kDriverName] = driver; });
      !st.ok()) {
    return st;
  }
  return run;
}

Result<std::unique_ptr<PipelineRun>> PipelineRun::CreateCoordinator(const config::Config& cfg, Options options,
                                                                    const ClusterSeat& seat) {
  const config::Member* me = cfg.cluster.Find(seat.member);
  if (me == nullptr) return Status::InvalidArgument("cluster: no member '" + seat.member + "'");
  const std::vector<uint32_t> trainers = TrainersOf(ActorsOf(*me));
  auto parts = RunParts::Create(cfg, &trainers);
  if (!parts.ok()) return parts.status();
  std::unique_ptr<PipelineRun> run(new PipelineRun());
  run->parts_ = std::move(parts).value();
  run->options_ = options;
  run->cluster_ = true;
  run->system_ = seat.sys;
  run->supervisor_ = seat.supervisor;
  run->keeper_ = StartKeeper(seat);
  run->member_ = seat.member;
  run->cluster_config_ = cfg.cluster;
  auto start = ResumeMember(options.resume_dir, ActorsOf(*me), run->parts_.get());
  if (!start.ok()) return start.status();
  run->rendezvous_ = SpawnRendezvous(*seat.sys);
  PipelineDirectory directory = ClusterDirectory(cfg, seat);
  run->lookup_ = directory.lookup;
  caf::anon_send(seat.supervisor, publish_atom::value, std::string(kRendezvousName), run->rendezvous_);
  if (Status st = run->Launch(cfg, *start, ActorsOf(*me), std::move(directory),
                              [&](const caf::actor& driver) {
                                caf::anon_send(seat.supervisor, publish_atom::value, std::string(kDriverName), driver);
                              });
      !st.ok()) {
    return st;
  }
  return run;
}

Status PipelineRun::Launch(const config::Config& cfg, const RunPosition& start, std::vector<PlannedActor> hosted,
                           PipelineDirectory directory, const std::function<void(const caf::actor&)>& publish_driver) {
  RunParts& p = *parts_;
  const uint32_t W = p.W(), S = p.S();
  auto planner = PlannerOptionsOf(cfg, p.table_rows, start.batches);
  if (!planner.ok()) return planner.status();
  caf::actor_system& sys = *system_;
  driver_ = std::make_unique<caf::scoped_actor>(sys);
  caf::actor driver = caf::actor_cast<caf::actor>(*driver_);
  first_batch_ = static_cast<int64_t>(start.batches);
  next_report_ = first_batch_;
  next_data_ = start.next;
  acked_.assign(W, first_batch_);
  if (options_.pause_every > 0) {
    // Pause points are global batches (P−1, 2P−1, …), wherever the run
    // resumed, so a resumed run evaluates and checkpoints where the
    // uninterrupted one does.
    const auto P = static_cast<int64_t>(options_.pause_every);
    hold_ = first_batch_ / P * P + P - 1;
  }
  publish_driver(driver);

  PipelineHost::Args args;
  args.parts = parts_.get();
  args.planner = *planner;
  args.cache_slots = CacheSlotsOf(cfg, p.table_rows);
  args.plans_ahead = options_.plans_ahead;
  args.start = start;
  args.hosted = std::move(hosted);
  auto lookup = directory.lookup;
  auto host = PipelineHost::Start(sys, std::move(args), std::move(directory));
  if (!host.ok()) return host.status();
  host_ = std::move(host).value();

  // Every actor of the run, hosted here or elsewhere, by its planned name.
  auto all = [&](wire::Role role, uint32_t n, std::vector<caf::actor>* out) -> Status {
    std::vector<std::string> names;
    for (uint32_t i = 0; i < n; ++i) names.push_back(std::string(RoleActorName(role)) + "[" + std::to_string(i) + "]");
    auto found = lookup(names);
    if (!found.ok()) return found.status();
    *out = std::move(found).value();
    for (uint32_t i = 0; i < n; ++i) actor_names_[(*out)[i].address()] = names[i];
    return Status::Ok();
  };
  for (auto [role, n, out] : {std::tuple{wire::Role::EMBEDDING, S, &shard_actors_},
                              std::tuple{wire::Role::CACHE_PARTITION, W, &partition_actors_},
                              std::tuple{wire::Role::SYNC_SCHEDULER, W, &scheduler_actors_},
                              std::tuple{wire::Role::TRAINER, W, &trainer_actors_}}) {
    if (Status st = all(role, n, out); !st.ok()) return st;
  }
  auto singles = lookup({"oracle", "batch_sampler"});
  if (!singles.ok()) return singles.status();
  oracle_ = (*singles)[0];
  sampler_ = (*singles)[1];
  actor_names_[oracle_.address()] = "oracle";
  actor_names_[sampler_.address()] = "batch_sampler";
  // The driver watches every actor: one that stops mid-run (a crash, a
  // kill, its process lost) ends the run promptly with its name.
  for (const auto& [address, name] : actor_names_) (*driver_)->monitor(caf::actor_cast<caf::actor>(address));
  // A member started from another checkpoint, or from none, would wait for
  // batches that never come: name it now.
  std::vector<caf::actor> starting = trainer_actors_;
  starting.insert(starting.end(), shard_actors_.begin(), shard_actors_.end());
  for (const caf::actor& actor : cluster_ ? starting : std::vector<caf::actor>{}) {
    const std::string& name = actor_names_[actor.address()];
    int64_t first = 0;
    Status st = Ask(*system_, actor, name + " did not say where it starts", [&](int64_t b) { first = b; },
                    position_atom::value);
    if (!st.ok()) return st;
    if (first != first_batch_) {
      return Status::InvalidArgument(name + " starts at batch " + std::to_string(first) + ", the coordinator at batch " +
                                     std::to_string(first_batch_) +
                                     ": start every member with the same --resume DIR (or none)");
    }
  }
  started_at_ = std::chrono::steady_clock::now();
  // The first pause point goes to the oracle by message, before the start
  // (CAF keeps one sender's messages in order, across processes too), so
  // that it holds wherever it runs: the oracle of a member other than the
  // coordinator (MemberPipeline) knows nothing of the coordinator's
  // --checkpoint-every, and one told nothing planned past the pause while
  // the driver flushed the caches for a checkpoint, changing the run.
  (*driver_)->send(oracle_, hold_atom::value, hold_);
  (*driver_)->send(oracle_, trainer_actors_, sampler_);  // starts the run
  return Status::Ok();
}

PipelineRun::~PipelineRun() {
  if (!system_) return;
  // The supervisor first: it would take the actors' ending for a failure.
  if (control_) control_->Stop("training finished");
  // In a cluster the actor system outlives the run: wait for the hosted
  // actors to end before their parts go, but not for a sync scheduler that
  // sits in a collective whose peers stopped (until Gloo's timeout): the
  // process is about to end.
  if (host_ && !host_->Stop(cluster_ ? kMemberStopWait : std::chrono::milliseconds(0)) && cluster_) {
    spdlog::warn("some actors of this run did not stop in time; leaving their memory to the process exit");
    (void)parts_.release();
  }
  host_.reset();
  if (rendezvous_) caf::anon_send_exit(rendezvous_, caf::exit_reason::user_shutdown);
  if (keeper_) caf::anon_send_exit(keeper_, caf::exit_reason::user_shutdown);
  keeper_ = nullptr;
  keepers_.clear();
  // Every handle goes: the system's destructor waits for detached actors,
  // which wait until nothing refers to them.
  rendezvous_ = supervisor_ = oracle_ = sampler_ = nullptr;
  for (auto* group : {&shard_actors_, &trainer_actors_, &partition_actors_, &scheduler_actors_}) group->clear();
  actor_names_.clear();
  driver_.reset();
  owned_system_.reset();  // waits for every actor to end
}

Status PipelineRun::InjectActorFailure(const std::string& name) {
  for (const auto& [address, actor_name] : actor_names_) {
    if (actor_name != name) continue;
    caf::anon_send_exit(address, caf::exit_reason::kill);
    return Status::Ok();
  }
  return Status::NotFound("the pipeline has no actor named '" + name + "'");
}

std::vector<std::string> PipelineRun::actor_names() const {
  std::vector<std::string> names;
  for (const auto& [address, name] : actor_names_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<NamedMeter> PipelineRun::actor_meters() const {
  return host_ ? host_->meters() : std::vector<NamedMeter>{};
}

Status PipelineRun::StartControlPlane(const config::Config& cfg, std::ostream& out) {
  auto hosting = [this](const PlannedActor& planned) { return host_->Hosted(planned); };
  auto control = InProcessControl::Start(*system_, cfg, hosting, out);
  if (!control.ok()) return control.status();
  control_ = std::move(control).value();
  return Status::Ok();
}

std::string PipelineRun::Progress() const {
  std::string s = "next batch to report " + std::to_string(next_report_);
  if (auto it = pending_.find(next_report_); it != pending_.end()) {
    s += " (" + std::to_string(it->second.reports) + " of " + std::to_string(trainers()) + " trainers settled it)";
  } else {
    s += " (no trainer settled it)";
  }
  s += ", write-backs acknowledged per trainer through batch";
  // Appends only: GCC 12 at -O3 warns (-Wrestrict, a false positive) on " " + std::to_string(…).
  for (int64_t a : acked_) s.append(" ").append(std::to_string(a - 1));
  if (end_ >= 0) s += ", the run has " + std::to_string(end_) + " batches";
  return s;
}

Status PipelineRun::ReceiveOne(const std::string& waiting_for) {
  bool stalled = false;
  auto& self = *driver_;
  self->receive(
      [&](settled_atom, uint32_t w, int64_t b, uint32_t epoch, uint64_t index, uint64_t samples, double loss,
          const std::vector<double>& times, const std::vector<uint64_t>& counts) {
        if (times.size() != kSettledTimes || counts.size() != kSettledCounts || w >= trainers()) {
          if (error_.empty()) {
            error_ = "trainer " + std::to_string(w) + " reported batch " + std::to_string(b) + " with " +
                     std::to_string(times.size()) + " times and " + std::to_string(counts.size()) +
                     " counts; this build expects " + std::to_string(kSettledTimes) + " and " +
                     std::to_string(kSettledCounts) + " (members of another build?)";
          }
          return;
        }
        Pending& p = pending_[b];
        StepReport& r = p.step;
        r.epoch = epoch;
        r.batch = index;
        r.samples = samples;
        // Losses in rank order: the trainers report in any order, so keep
        // them apart and add when all are in.
        if (p.reports == 0) losses_[b].assign(trainers(), 0.0);
        losses_[b][w] = loss;
        r.fetch_s = std::max(r.fetch_s, times[kWaitRows]);
        r.forward_s = std::max(r.forward_s, times[kForward]);
        r.backward_s = std::max(r.backward_s, times[kBackward]);
        r.dense_sync_s = std::max(r.dense_sync_s, times[kCriticalSync]);
        r.exposed_delayed_s = std::max(r.exposed_delayed_s, times[kExposedDelayed]);
        r.optimizer_s = std::max(r.optimizer_s, times[kApply]);
        r.stream_wait_rows_s = std::max(r.stream_wait_rows_s, times[kStreamWaitRows]);
        r.stream_wait_sync_s = std::max(r.stream_wait_sync_s, times[kStreamWaitSync]);
        r.waits_on_device = times[kWaitsOnDevice] != 0.0;
        r.fetched_rows += counts[kPrefetched];
        r.written_rows += counts[kWritten];
        r.private_rows += counts[kPrivateUpdated];
        if (w == 0) {
          r.synced_critical = counts[kCritical];
          r.synced_delayed = counts[kDelayed];
          r.missed_rows += counts[kSharedMisses];
        }
        r.missed_rows += counts[kPrivateMisses];
        r.trainers.resize(trainers());
        r.trainers[w] = FiguresOf(times, counts);
        ++p.reports;
      },
      [&](acked_atom, uint32_t w, int64_t b, uint64_t) {
        if (w < acked_.size()) acked_[w] = std::max(acked_[w], b + 1);
      },
      [&](error_atom, const std::string& what) {
        if (error_.empty()) error_ = what;
      },
      [&](error_atom, oracle::config_atom, const std::string& what) {
        if (!error_.empty()) return;
        error_ = what;
        config_error_ = true;
      },
      [&](end_atom, uint64_t batches) { end_ = static_cast<int64_t>(batches); },
      [&](report_atom, const std::string& report) { lookahead_report_ = report; },
      [&](const caf::down_msg& down) {
        if (!error_.empty()) return;
        auto it = actor_names_.find(down.source);
        const std::string name = it != actor_names_.end() ? it->second : "an actor of the pipeline";
        error_ = "actor " + name + " stopped (" + caf::to_string(down.reason) + "); last completed batch " +
                 std::to_string(next_report_ - 1) + "; " + Progress();
      },
      caf::after(std::chrono::milliseconds(static_cast<int64_t>(options_.stall_seconds * 1000))) >> [&] { stalled = true; });
  if (!error_.empty()) return Failure();
  if (stalled) {
    return Status::Unavailable("the training pipeline reported nothing for " +
                               std::to_string(static_cast<int>(options_.stall_seconds)) + " s while waiting for " +
                               waiting_for + ": " + Progress());
  }
  return Status::Ok();
}

Status PipelineRun::Failure() const {
  return config_error_ ? Status::InvalidArgument(error_) : Status::Unavailable(error_);
}

Result<bool> PipelineRun::Step(StepReport* report) {
  if (!error_.empty()) return Failure();
  if (stopping_ && next_report_ > hold_) return false;
  if (next_report_ > hold_) {  // the caller goes past a pause point
    hold_ += static_cast<int64_t>(options_.pause_every);
    (*driver_)->send(oracle_, hold_atom::value, hold_);
  }
  while (true) {
    if (auto it = pending_.find(next_report_); it != pending_.end() && it->second.reports == trainers()) {
      *report = it->second.step;
      report->loss_sum = 0;
      for (double l : losses_[next_report_]) report->loss_sum += l;  // rank order
      report->unique_rows = report->synced_critical + report->synced_delayed + report->private_rows;
      next_data_ = {report->epoch, report->batch + 1};
      // The supervisor names the last completed batch when a member is lost.
      if (supervisor_) (*driver_)->send(supervisor_, settled_atom::value, next_report_);
      pending_.erase(it);
      losses_.erase(next_report_);
      ++next_report_;
      return true;
    }
    if (end_ >= 0 && next_report_ >= end_) return false;
    if (Status st = ReceiveOne("batch " + std::to_string(next_report_)); !st.ok()) return st;
  }
}

Status PipelineRun::StopAfterPlanned() {
  if (!error_.empty()) return Status::Unavailable(error_);
  int64_t last = 0;
  Status st = Ask(*system_, oracle_, "the oracle did not say where it stops", [&](int64_t l) { last = l; },
                  hold_atom::value);
  if (!st.ok()) return st;
  // The oracle planned at least every batch reported so far.
  hold_ = std::max(last, next_report_ - 1);
  stopping_ = true;
  return Status::Ok();
}

Status PipelineRun::WaitAcked(int64_t batch) {
  while (*std::min_element(acked_.begin(), acked_.end()) <= batch) {
    if (Status st = ReceiveOne("the write-backs of batch " + std::to_string(batch)); !st.ok()) return st;
  }
  return Status::Ok();
}

Status PipelineRun::Finish() {
  if (finished_) return Status::Ok();
  if (!error_.empty()) return Failure();
  if (end_ < 0 || next_report_ < end_) {
    return Status::InvalidArgument("Finish() before the last batch: " + Progress());
  }
  if (Status st = WaitAcked(end_ - 1); !st.ok()) return st;
  // Every eviction has been applied: the caches must be empty.
  for (uint32_t w = 0; w < trainers(); ++w) {
    wire::Frame<wire::Rows> answer;
    wire::RowPayload payload;
    if (Status st = CachedRowsOf(w, &answer, &payload); !st.ok()) return st;
    if (payload.keys().size() != 0) {
      return Status::InvalidArgument("run ended with " + std::to_string(payload.keys().size()) +
                                     " rows still cached in trainer[" + std::to_string(w) + "]");
    }
  }
  finished_ = true;
  return Status::Ok();
}

Status PipelineRun::CheckQuiet(const char* what) const {
  if (finished_) return Status::Ok();
  if (next_report_ - 1 == hold_) return Status::Ok();
  return Status::InvalidArgument(std::string(what) +
                                 " needs a quiet run: call it after Finish() or when Step() has returned a pause "
                                 "point (Options::pause_every)");
}

Result<EvalReport> PipelineRun::Evaluate(uint64_t max_samples) {
  if (Status st = CheckQuiet("Evaluate()"); !st.ok()) return st;
  if (!finished_) {
    if (Status st = WaitAcked(next_report_ - 1); !st.ok()) return st;
  }
  if (Status st = FetchDense(); !st.ok()) return st;
  return parts_->Evaluate(max_samples, [&](const wire::RowKeys& keys, float* out) { return PeekRows(keys, out); });
}

Status PipelineRun::FetchDense() {
  // In one process parts_->trainers[0] is trainer 0's own core.
  if (!cluster_) return Status::Ok();
  TrainerCore& local = *parts_->trainers[0];
  const auto params = local.model().params();
  const auto state = local.dense_optimizer().state();
  Status copied;
  Status asked = Ask(
      *system_, trainer_actors_[0], "trainer[0] did not send its dense parameters",
      [&](std::vector<float>& p, std::vector<float>& o) {
        if (p.size() != params.size() || o.size() != state.size()) {
          copied = Status::Corruption("trainer[0] sent " + std::to_string(p.size()) + " dense parameters and " +
                                      std::to_string(o.size()) + " optimizer floats, not " +
                                      std::to_string(params.size()) + " and " + std::to_string(state.size()));
          return;
        }
        std::copy(p.begin(), p.end(), params.begin());
        std::copy(o.begin(), o.end(), state.begin());
      },
      dense_atom::value);
  return asked.ok() ? copied : asked;
}

Status PipelineRun::PeekRows(const wire::RowKeys& keys, float* out) {
  // A row's latest value is in any cache that holds it (the run is quiet:
  // every sync has landed), else in its shard. Asked of the actors, so that
  // it works wherever they run: the trainers first, then, per shard, the
  // rows no cache had.
  const uint32_t floats = parts_->row_optimizer->row_floats();
  std::unordered_map<uint64_t, size_t> position;
  for (size_t i = 0; i < keys.size(); ++i) position.emplace(CachedRowKey(keys.tables[i], keys.rows[i]), i);
  std::vector<bool> found(keys.size(), false);
  wire::RowPayload payload;
  auto ask = [&](const caf::actor& a, const std::string& name, const wire::RowKeys& asked) -> Status {
    wire::Frame<wire::Rows> answer;
    Status st = Ask(
        *system_, a, name + " did not answer for the rows to evaluate",
        [&](wire::Frame<wire::Rows>& rows) { answer = std::move(rows); }, peek_atom::value,
        wire::EncodeRowFetch({}, asked));
    if (!st.ok()) return st;
    if (Status d = wire::DecodeRows(answer, floats, &payload); !d.ok()) return d;
    for (size_t i = 0; i < payload.keys().size(); ++i) {
      auto it = position.find(CachedRowKey(payload.keys().tables[i], payload.keys().rows[i]));
      if (it == position.end()) return Status::Corruption(name + " answered with a row it was not asked for");
      payload.CopyRow(i, out + it->second * floats);
      found[it->second] = true;
    }
    return Status::Ok();
  };
  for (uint32_t w = 0; w < trainers(); ++w) {
    wire::RowKeys missing;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!found[i]) missing.push_back(keys.tables[i], keys.rows[i]);
    }
    if (missing.size() == 0) return Status::Ok();
    if (Status st = ask(trainer_actors_[w], "trainer[" + std::to_string(w) + "]", missing); !st.ok()) return st;
  }
  std::vector<wire::RowKeys> per_shard(shards());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i]) per_shard[embedding::ShardOf(keys.tables[i], keys.rows[i], shards())].push_back(keys.tables[i], keys.rows[i]);
  }
  for (uint32_t s = 0; s < shards(); ++s) {
    if (per_shard[s].size() == 0) continue;
    if (Status st = ask(shard_actors_[s], "embedding_shard[" + std::to_string(s) + "]", per_shard[s]); !st.ok()) {
      return st;
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i]) return Status::Corruption("no shard answered for row " + std::to_string(keys.rows[i]) + " of table " +
                                             std::to_string(keys.tables[i]));
  }
  return Status::Ok();
}

Status PipelineRun::CachedRowsOf(uint32_t w, wire::Frame<wire::Rows>* frame, wire::RowPayload* rows) {
  Status st = Ask(
      *system_, trainer_actors_[w], "trainer[" + std::to_string(w) + "] did not send its cached rows",
      [&](wire::Frame<wire::Rows>& answer) { *frame = std::move(answer); }, cached_atom::value);
  if (!st.ok()) return st;
  return wire::DecodeRows(*frame, parts_->row_optimizer->row_floats(), rows);
}

Status PipelineRun::FlushCaches() {
  // Every row a cache holds into its shard: harmless to the run (a cached
  // row is never fetched, and its eviction writes it back again later), and
  // it makes the shards hold every row's latest value. At a quiet point the
  // caches that hold a row agree on it: the first one's copy goes.
  const uint32_t floats = parts_->row_optimizer->row_floats();
  std::unordered_set<uint64_t> seen;
  std::vector<wire::RowKeys> keys(shards());
  std::vector<std::vector<float>> values(shards());
  wire::RowPayload payload;
  for (uint32_t w = 0; w < trainers(); ++w) {
    wire::Frame<wire::Rows> answer;
    if (Status st = CachedRowsOf(w, &answer, &payload); !st.ok()) return st;
    for (size_t i = 0; i < payload.keys().size(); ++i) {
      const uint32_t t = payload.keys().tables[i];
      const data::RowId r = payload.keys().rows[i];
      if (!seen.insert(CachedRowKey(t, r)).second) continue;
      const uint32_t s = embedding::ShardOf(t, r, shards());
      keys[s].push_back(t, r);
      values[s].resize(values[s].size() + floats);
      payload.CopyRow(i, values[s].data() + values[s].size() - floats);
    }
  }
  wire::RowsHeader header;
  header.dim = parts_->row_optimizer->width();
  header.state_width = floats - header.dim;
  for (uint32_t s = 0; s < shards(); ++s) {
    if (keys[s].size() == 0) continue;
    auto frame = wire::EncodeWriteBack(header, keys[s], [&](float* out) {
      std::copy(values[s].begin(), values[s].end(), out);
    });
    const std::string who = "embedding_shard[" + std::to_string(s) + "]";
    Status st = AskWithin(
        kCheckpointWait, *system_, shard_actors_[s], who + " did not store the cached rows", [](ok_atom) {},
        store_atom::value, std::move(frame));
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status PipelineRun::SaveCheckpoint(const std::string& dir) {
  if (Status st = CheckQuiet("SaveCheckpoint()"); !st.ok()) return st;
  if (!finished_) {
    if (Status st = WaitAcked(next_report_ - 1); !st.ok()) return st;
  }
  if (Status st = FlushCaches(); !st.ok()) return st;
  if (Status st = FetchDense(); !st.ok()) return st;
  const RunPosition position{static_cast<uint64_t>(next_report_), next_data_};
  if (keeper_) return SaveToKeepers(position);
  // Each shard writes its own file, on its own host: a cluster's checkpoint
  // directory must be one every member sees (the same path on a shared
  // filesystem).
  return SaveRunCheckpoint(*parts_, dir, position,
                           [&](uint32_t s, const std::string& path, int64_t batch) {
                             const std::string who = "embedding_shard[" + std::to_string(s) + "]";
                             return AskWithin(
                                 kCheckpointWait, *system_, shard_actors_[s], who + " did not write " + path +
                                     (cluster_ ? " (is the checkpoint directory on a filesystem every member sees?)"
                                               : ""),
                                 [](ok_atom) {}, checkpoint_atom::value, path, batch);
                           });
}

Status PipelineRun::SaveToKeepers(const RunPosition& position) {
  const uint64_t k = position.batches;
  const std::string snapshot = "snapshot batch-" + std::to_string(k) + ": ";
  // Spares keep nothing until they take over a member (under its name).
  const std::vector<std::string> keeping = KeepingMembers(cluster_config_);
  if (keepers_.empty()) {
    std::vector<std::string> names;
    for (const std::string& m : keeping) names.push_back(KeeperName(m));
    auto found = lookup_(names);
    if (!found.ok()) return found.status();
    for (size_t i = 0; i < names.size(); ++i) keepers_[keeping[i]] = (*found)[i];
  }
  auto keeper_ask = [&](const std::string& m, const std::string& what, auto on_answer, auto&&... args) {
    return AskWithin(kCheckpointWait, *system_, keepers_.at(m), snapshot + "the keeper of member '" + m + "' " + what,
                     on_answer, std::forward<decltype(args)>(args)...);
  };
  // Every keeper's temporary directory of snapshot k, on its own host.
  std::map<std::string, std::string> tmp;
  for (const std::string& m : keeping) {
    Status st = keeper_ask(m, "did not begin it", [&](std::string& dir) { tmp[m] = dir; },
                           snap_begin_atom::value, k);
    if (!st.ok()) return st;
  }
  // The dense piece: written here, into this member's keeper directory
  // (this host), and sent to every other keeper.
  if (Status st = WriteDenseCheckpoint(*parts_, tmp[member_] + "/" + kDensePiece, position); !st.ok()) return st;
  for (const std::string& m : keeping) {
    if (m == member_) continue;
    Status st = keeper_ask(member_, "did not send the dense piece to member '" + m + "'", [](ok_atom) {},
                           snap_send_atom::value, k, std::string(kDensePiece), keepers_.at(m));
    if (!st.ok()) return st;
  }
  // Each shard's file: written by the shard into its own member's keeper
  // directory, then copied to that member's replica holder.
  for (const std::string& name : keeping) {
    const config::Member& m = *cluster_config_.Find(name);
    const std::string holder = ReplicaHolder(cluster_config_, m.name);
    for (const PlannedActor& a : ActorsOf(m)) {
      if (a.role != wire::Role::EMBEDDING) continue;
      const std::string piece = ShardCheckpointFile(a.index, shards());
      const std::string path = tmp[m.name] + "/" + piece;
      Status st = AskWithin(
          kCheckpointWait, *system_, shard_actors_[a.index], snapshot + a.name + " did not write " + path,
          [](ok_atom) {}, checkpoint_atom::value, path, static_cast<int64_t>(k));
      if (!st.ok()) return st;
      if (holder.empty()) continue;
      st = keeper_ask(m.name, "did not send " + piece + " to member '" + holder + "'", [](ok_atom) {},
                      snap_send_atom::value, k, piece, keepers_.at(holder));
      if (!st.ok()) return st;
    }
  }
  // Committed everywhere before here: this member's LATEST names a snapshot
  // every member has, and a recovery resumes from it.
  for (const std::string& m : keeping) {
    if (m == member_) continue;
    Status st = keeper_ask(m, "did not commit it", [](ok_atom) {}, snap_commit_atom::value, k);
    if (!st.ok()) return st;
  }
  if (Status st = keeper_ask(member_, "did not commit it", [](ok_atom) {}, snap_commit_atom::value, k); !st.ok()) {
    return st;
  }
  // This member's LATEST, replicated: a coordinator whose store is lost
  // with its agent learns it from the others (RestoreCoordinatorSnapshot).
  for (const std::string& m : keeping) {
    if (m == member_) continue;
    Status st = keeper_ask(m, "did not record the coordinator's commit", [](ok_atom) {}, snap_mark_atom::value, k);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Result<uint64_t> PipelineRun::ParameterDigest() {
  if (Status st = CheckQuiet("ParameterDigest()"); !st.ok()) return st;
  if (!finished_) return Status::InvalidArgument("ParameterDigest() covers the shards only after Finish()");
  // Asked of the actors, wherever they run: each trainer's dense replica
  // (all must agree) and each shard's rows.
  auto ask = [&](const caf::actor& a, const std::string& name, uint64_t* out) -> Status {
    return Ask(*system_, a, name + " did not report its parameter digest", [&](uint64_t d) { *out = d; },
               digest_atom::value);
  };
  uint64_t dense = 0;
  for (uint32_t w = 0; w < trainers(); ++w) {
    uint64_t d = 0;
    if (Status st = ask(trainer_actors_[w], "trainer[" + std::to_string(w) + "]", &d); !st.ok()) return st;
    if (w > 0 && d != dense) {
      return Status::Corruption("dense replicas diverged: trainer[" + std::to_string(w) + "] differs from trainer[0]");
    }
    dense = d;
  }
  std::vector<uint64_t> shard_digests(shards());
  for (uint32_t s = 0; s < shards(); ++s) {
    if (Status st = ask(shard_actors_[s], "embedding_shard[" + std::to_string(s) + "]", &shard_digests[s]); !st.ok()) {
      return st;
    }
  }
  return CombineParameterDigest(dense, shard_digests);
}

Result<std::vector<ShardUsage>> PipelineRun::ShardUsages() {
  // After a failure in a cluster a shard may be gone with its process: do
  // not wait on it.
  if (cluster_ && !error_.empty()) return Status::Unavailable("no shard usage: " + error_);
  std::vector<ShardUsage> usage;
  for (size_t s = 0; s < shard_actors_.size(); ++s) {
    Status st = Ask(
        *system_, shard_actors_[s], "embedding_shard[" + std::to_string(s) + "] did not report its memory",
        [&](uint64_t rows, uint64_t bytes) { usage.push_back({rows, bytes}); }, usage_atom::value);
    if (!st.ok()) return st;
  }
  return usage;
}

Result<PipelineRun::PlanReport> PipelineRun::OracleStats() {
  if (cluster_ && !error_.empty()) return Status::Unavailable("no oracle statistics: " + error_);
  PlanReport report;
  Status st = Ask(
      *system_, oracle_, "the oracle did not report its plan statistics",
      [&](std::string& summary, std::string& json) {
        report.summary = std::move(summary);
        report.json = std::move(json);
      },
      stats_atom::value);
  if (!st.ok()) return st;
  return report;
}

Result<std::string> RestoreCoordinatorSnapshot(const config::Config& cfg, const ClusterSeat& seat) {
  const config::Member* me = cfg.cluster.Find(seat.member);
  if (me == nullptr) return Status::InvalidArgument("cluster: no member '" + seat.member + "'");
  return RestoreCoordinatorFromKeepers(*seat.sys, cfg,
                                       PiecesOf(ActorsOf(*me), static_cast<uint32_t>(cfg.cluster.TotalShards())),
                                       ClusterDirectory(cfg, seat).lookup, seat.snapshot_store);
}

Result<std::unique_ptr<MemberPipeline>> MemberPipeline::Start(const config::Config& cfg, const ClusterSeat& seat,
                                                              const std::string& resume_dir) {
  const std::vector<PlannedActor> hosted = ActorsOf(*cfg.cluster.Find(seat.member));
  const std::vector<uint32_t> trainers = TrainersOf(hosted);
  auto parts = RunParts::Create(cfg, &trainers);
  if (!parts.ok()) return parts.status();
  std::unique_ptr<MemberPipeline> member(new MemberPipeline());
  member->parts_ = std::move(parts).value();
  member->keeper_ = StartKeeper(seat);
  std::string resume = resume_dir;
  if (member->keeper_) {
    // Snapshots in memory: the coordinator's keeper says which one the run
    // resumes from; what this member's store lacks comes from the others.
    auto restored = RestoreFromKeepers(*seat.sys, cfg, seat.member, PiecesOf(hosted, member->parts_->S()),
                                       ClusterDirectory(cfg, seat).lookup, seat.snapshot_store);
    if (!restored.ok()) return restored.status();
    if (!restored->empty()) resume = *restored;  // else a fresh run, or the --resume DIR given
  }
  auto start = ResumeMember(resume, hosted, member->parts_.get());
  if (!start.ok()) return start.status();
  auto planner = PlannerOptionsOf(cfg, member->parts_->table_rows, start->batches);
  if (!planner.ok()) return planner.status();
  PipelineHost::Args args;
  args.parts = member->parts_.get();
  args.planner = *planner;
  args.cache_slots = CacheSlotsOf(cfg, member->parts_->table_rows);
  args.start = *start;
  args.hosted = hosted;
  auto host = PipelineHost::Start(*seat.sys, std::move(args), ClusterDirectory(cfg, seat));
  if (!host.ok()) return host.status();
  member->host_ = std::move(host).value();
  return member;
}

MemberPipeline::~MemberPipeline() {
  if (keeper_) caf::anon_send_exit(keeper_, caf::exit_reason::user_shutdown);
  if (!host_) return;
  // Until every actor has ended, the parts they use must stay; a sync
  // scheduler inside a collective whose peers stopped would take Gloo's
  // timeout, and the process is about to end.
  if (!host_->Stop(kMemberStopWait)) {
    spdlog::info("some actors of this member were still busy at the stop; the process exit ends them");
    (void)parts_.release();
  }
}

}  // namespace actorrec::trainer
