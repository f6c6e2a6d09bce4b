#include "actors/trainer/pipeline_run.hpp"

#include <caf/all.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "actors/common/atoms.hpp"
#include "actors/embedding/shard_actor.hpp"
#include "actors/node/runtime.hpp"
#include "actors/oracle/oracle_actor.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/sampler/sampler_actor.hpp"
#include "actors/trainer/cache_partition_actor.hpp"
#include "actors/trainer/checkpoint.hpp"
#include "actors/trainer/sync_scheduler_actor.hpp"
#include "messages/registry.hpp"

namespace actorrec::trainer {
namespace {

// Gloo groups of one process need distinct key prefixes in their store.
std::string NextGroupPrefix() {
  static std::atomic<uint64_t> runs{0};
  return "pipeline-" + std::to_string(::getpid()) + "-" + std::to_string(runs++);
}

}  // namespace

Result<std::unique_ptr<PipelineRun>> PipelineRun::Create(const config::Config& cfg, Options options) {
  const config::Mode mode = cfg.training.mode;
  if (mode != config::Mode::kLrppDelayed && mode != config::Mode::kLrpp && mode != config::Mode::kReplicated) {
    return Status::InvalidArgument(
        "training.mode: the actor pipeline runs lrpp_delayed, lrpp and replicated; the other modes have no oracle");
  }
  auto parts = RunParts::Create(cfg);
  if (!parts.ok()) return parts.status();
  std::unique_ptr<PipelineRun> run(new PipelineRun());
  run->parts_ = std::move(parts).value();
  run->options_ = options;
  RunParts& p = *run->parts_;
  const uint32_t W = p.W(), S = p.S(), T = p.T();

  RunPosition start;
  if (!options.resume_dir.empty()) {
    auto resumed = LoadRunCheckpoint(options.resume_dir, &p);
    if (!resumed.ok()) return resumed.status();
    start = *resumed;
  }
  oracle::PlannerOptions planner;
  planner.first_batch = start.batches;
  planner.trainers = W;
  planner.table_rows = p.table_rows;
  planner.partitions = oracle::OnePartition(T, static_cast<uint32_t>(cfg.training.cache_rows));
  planner.lookahead = static_cast<uint32_t>(cfg.training.lookahead);
  planner.private_rows = mode != config::Mode::kReplicated;
  if (Status st = oracle::Validate(planner); !st.ok()) return Status::InvalidArgument("training: " + st.message());
  for (auto& t : p.trainers) t->EnsureSlots(static_cast<uint32_t>(cfg.training.cache_rows));

  run->system_config_ = std::make_unique<caf::actor_system_config>();
  wire::AddMessageTypes(*run->system_config_);
  // Trainers and schedulers are detached threads; the pooled actors (oracle,
  // partitions, shards, sampler) wait on a shared queue instead of polling,
  // so idle workers leave the cores to the trainers' compute.
  run->system_config_->set("scheduler.policy", caf::atom("sharing"));
  run->system_ = std::make_unique<caf::actor_system>(*run->system_config_);
  caf::actor_system& sys = *run->system_;
  run->driver_ = std::make_unique<caf::scoped_actor>(sys);
  caf::actor driver = caf::actor_cast<caf::actor>(*run->driver_);
  run->first_batch_ = static_cast<int64_t>(planner.first_batch);
  run->next_report_ = run->first_batch_;
  run->next_data_ = start.next;
  run->acked_.assign(W, run->first_batch_);
  run->cached_.resize(W);
  if (options.pause_every > 0) run->hold_ = run->first_batch_ + static_cast<int64_t>(options.pause_every) - 1;

  const uint32_t width = p.row_optimizer->width();
  std::vector<caf::actor> shards;
  for (uint32_t s = 0; s < S; ++s) {
    shards.push_back(embedding::SpawnShardActor(sys, {p.shards[s].get(), W, run->first_batch_, width, driver}));
  }
  auto store = gpu::MakeInProcessStore();
  const std::string prefix = NextGroupPrefix();
  std::vector<caf::actor> trainers, partitions, schedulers;
  for (uint32_t w = 0; w < W; ++w) {
    partitions.push_back(SpawnCachePartition(sys, {w, 0, p.trainers[w].get(), width, shards, driver}));
    gpu::GlooOptions gloo;
    gloo.rank = w;
    gloo.size = W;
    gloo.store = store;
    gloo.prefix = prefix;
    schedulers.push_back(SpawnSyncScheduler(sys, {gloo, driver}));
  }
  // The oracle is spawned before the trainers (they credit it) and learns
  // their handles, and its sampler's, from its start message.
  oracle::OracleActorArgs oracle_args;
  oracle_args.options = planner;
  oracle_args.partitions = partitions;
  oracle_args.driver = driver;
  oracle_args.plans_ahead = options.plans_ahead;
  oracle_args.row_bytes = uint64_t{p.row_optimizer->row_floats()} * sizeof(float);
  oracle_args.hold = run->hold_;
  run->oracle_ = oracle::SpawnOracleActor(sys, std::move(oracle_args));
  for (uint32_t w = 0; w < W; ++w) {
    TrainerActorArgs args;
    args.trainer = w;
    args.core = p.trainers[w].get();
    args.partition = partitions[w];
    args.scheduler = schedulers[w];
    args.oracle = run->oracle_;
    args.driver = driver;
    args.cached = &run->cached_[w];
    args.first_batch = run->first_batch_;
    trainers.push_back(SpawnTrainerActor(sys, std::move(args)));
    (*run->driver_)->send(partitions[w], trainers[w]);
  }
  SamplerArgs sampler;
  sampler.source = p.TrainSource();
  sampler.options = p.SequenceOptions();
  sampler.options.start = start.next;
  if (sampler.options.max_batches != 0) {
    // max_batches counts the whole run; a resumed one has done some.
    if (sampler.options.max_batches <= start.batches) sampler.options.epochs = 0;
    sampler.options.max_batches = sampler.options.max_batches > start.batches ? sampler.options.max_batches - start.batches : 0;
  }
  sampler.consumer = run->oracle_;
  caf::actor sampler_actor = SpawnSampler(sys, std::move(sampler));
  (*run->driver_)->send(run->oracle_, trainers, sampler_actor);

  run->shard_actors_ = shards;
  run->sampler_ = sampler_actor;
  run->trainer_actors_ = trainers;
  run->partition_actors_ = partitions;
  run->scheduler_actors_ = schedulers;
  for (auto* group : {&shards, &partitions, &schedulers, &trainers}) {
    run->actors_.insert(run->actors_.end(), group->begin(), group->end());
  }
  run->actors_.push_back(run->oracle_);
  run->actors_.push_back(sampler_actor);
  // The driver watches every actor: one that stops mid-run (a crash, a
  // kill) ends the run promptly with its name, not after a stall.
  auto name = [&](const caf::actor& a, std::string n) { run->actor_names_[a.address()] = std::move(n); };
  for (uint32_t s = 0; s < S; ++s) name(shards[s], "embedding_shard[" + std::to_string(s) + "]");
  for (uint32_t w = 0; w < W; ++w) {
    name(trainers[w], "trainer[" + std::to_string(w) + "]");
    name(partitions[w], "cache_partition[" + std::to_string(w) + "]");
    name(schedulers[w], "sync_scheduler[" + std::to_string(w) + "]");
  }
  name(run->oracle_, "oracle");
  name(sampler_actor, "batch_sampler");
  for (const caf::actor& a : run->actors_) (*run->driver_)->monitor(a);
  return run;
}

PipelineRun::~PipelineRun() {
  if (!system_) return;
  // The supervisor first: it would take the actors' ending for a failure.
  if (control_) control_->Stop("training finished");
  control_.reset();
  for (const caf::actor& a : actors_) (*driver_)->send(a, stop_atom::value);
  // Every handle goes: the system's destructor waits for detached actors,
  // which wait until nothing refers to them.
  actors_.clear();
  oracle_ = sampler_ = nullptr;
  for (auto* group : {&shard_actors_, &trainer_actors_, &partition_actors_, &scheduler_actors_}) group->clear();
  driver_.reset();
  system_.reset();  // waits for every actor to end
}

Status PipelineRun::InjectActorFailure(const std::string& name) {
  for (const auto& [address, actor_name] : actor_names_) {
    if (actor_name != name) continue;
    caf::anon_send_exit(address, caf::exit_reason::kill);
    return Status::Ok();
  }
  return Status::NotFound("the pipeline has no actor named '" + name + "'");
}

Status PipelineRun::StartControlPlane(const config::Config& cfg, std::ostream& out) {
  auto hosting = [this](const PlannedActor& planned) -> caf::actor {
    auto at = [&](const std::vector<caf::actor>& actors) {
      return planned.index < actors.size() ? actors[planned.index] : caf::actor{};
    };
    switch (planned.role) {
      case wire::Role::SAMPLER: return sampler_;
      case wire::Role::ORACLE: return oracle_;
      case wire::Role::EMBEDDING: return at(shard_actors_);
      case wire::Role::TRAINER: return at(trainer_actors_);
      case wire::Role::CACHE_PARTITION: return at(partition_actors_);
      case wire::Role::SYNC_SCHEDULER: return at(scheduler_actors_);
      default: return caf::actor{};
    }
  };
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
  for (int64_t a : acked_) s += " " + std::to_string(a - 1);
  if (end_ >= 0) s += ", the run has " + std::to_string(end_) + " batches";
  return s;
}

Status PipelineRun::ReceiveOne(const std::string& waiting_for) {
  bool stalled = false;
  auto& self = *driver_;
  self->receive(
      [&](settled_atom, uint32_t w, int64_t b, uint32_t epoch, uint64_t index, uint64_t samples, double loss,
          const std::vector<double>& times, const std::vector<uint64_t>& counts) {
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
        r.fetched_rows += counts[kPrefetched];
        r.written_rows += counts[kWritten];
        r.private_rows += counts[kPrivateUpdated];
        if (w == 0) {
          r.synced_critical = counts[kCritical];
          r.synced_delayed = counts[kDelayed];
          r.missed_rows += counts[kSharedMisses];
        }
        r.missed_rows += counts[kPrivateMisses];
        ++p.reports;
      },
      [&](acked_atom, uint32_t w, int64_t b, uint64_t) {
        if (w < acked_.size()) acked_[w] = std::max(acked_[w], b + 1);
      },
      [&](error_atom, const std::string& what) {
        if (error_.empty()) error_ = what;
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
  if (!error_.empty()) return Status::Unavailable(error_);
  if (stalled) {
    return Status::Unavailable("the training pipeline reported nothing for " +
                               std::to_string(static_cast<int>(options_.stall_seconds)) + " s while waiting for " +
                               waiting_for + ": " + Progress());
  }
  return Status::Ok();
}

Result<bool> PipelineRun::Step(StepReport* report) {
  if (!error_.empty()) return Status::Unavailable(error_);
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
      pending_.erase(it);
      losses_.erase(next_report_);
      ++next_report_;
      return true;
    }
    if (end_ >= 0 && next_report_ >= end_) return false;
    if (Status st = ReceiveOne("batch " + std::to_string(next_report_)); !st.ok()) return st;
  }
}

Status PipelineRun::WaitAcked(int64_t batch) {
  while (*std::min_element(acked_.begin(), acked_.end()) <= batch) {
    if (Status st = ReceiveOne("the write-backs of batch " + std::to_string(batch)); !st.ok()) return st;
  }
  return Status::Ok();
}

Status PipelineRun::Finish() {
  if (finished_) return Status::Ok();
  if (!error_.empty()) return Status::Unavailable(error_);
  if (end_ < 0 || next_report_ < end_) {
    return Status::InvalidArgument("Finish() before the last batch: " + Progress());
  }
  if (Status st = WaitAcked(end_ - 1); !st.ok()) return st;
  for (const CachedRows& c : cached_) {
    if (!c.empty()) {
      return Status::InvalidArgument("run ended with " + std::to_string(c.size()) + " rows still cached");
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
  RunParts& p = *parts_;
  const size_t bytes = size_t{p.row_optimizer->row_floats()} * sizeof(float);
  return p.Evaluate(max_samples, [&](uint32_t t, data::RowId r, float* out) {
    const uint64_t key = CachedRowKey(t, r);
    for (uint32_t w = 0; w < trainers(); ++w) {
      if (auto it = cached_[w].find(key); it != cached_[w].end()) {
        std::memcpy(out, p.trainers[w]->slot(it->second), bytes);
        return Status::Ok();
      }
    }
    return p.shards[embedding::ShardOf(t, r, shards())]->Peek(t, r, out);
  });
}

Status PipelineRun::SaveCheckpoint(const std::string& dir) {
  if (Status st = CheckQuiet("SaveCheckpoint()"); !st.ok()) return st;
  if (!finished_) {
    if (Status st = WaitAcked(next_report_ - 1); !st.ok()) return st;
  }
  // The caches' rows into their shards: harmless to the run (a cached row is
  // never fetched, and its eviction writes it back again later), and it makes
  // the shards hold every row's latest value.
  RunParts& p = *parts_;
  for (uint32_t w = 0; w < trainers(); ++w) {
    for (const auto& [key, slot] : cached_[w]) {
      const uint32_t t = static_cast<uint32_t>(key >> 32);
      const uint32_t r = static_cast<uint32_t>(key);
      Status st = p.shards[embedding::ShardOf(t, r, shards())]->Store(&t, &r, 1, p.trainers[w]->slot(slot));
      if (!st.ok()) return st;
    }
  }
  return SaveRunCheckpoint(p, dir, {static_cast<uint64_t>(next_report_), next_data_});
}

Result<uint64_t> PipelineRun::ParameterDigest() {
  if (Status st = CheckQuiet("ParameterDigest()"); !st.ok()) return st;
  if (!finished_) return Status::InvalidArgument("ParameterDigest() covers the shards only after Finish()");
  return parts_->ParameterDigest();
}

Result<std::vector<ShardUsage>> PipelineRun::ShardUsages() {
  std::vector<ShardUsage> usage;
  for (size_t s = 0; s < shard_actors_.size(); ++s) {
    std::string failed;
    (*driver_)
        ->request(shard_actors_[s], std::chrono::seconds(30), usage_atom::value)
        .receive([&](uint64_t rows, uint64_t bytes) { usage.push_back({rows, bytes}); },
                 [&](caf::error& e) { failed = system_->render(e); });
    if (!failed.empty()) {
      return Status::Unavailable("embedding_shard[" + std::to_string(s) + "] did not report its memory: " + failed);
    }
  }
  return usage;
}

Result<PipelineRun::PlanReport> PipelineRun::OracleStats() {
  PlanReport report;
  std::string failed;
  (*driver_)
      ->request(oracle_, std::chrono::seconds(30), stats_atom::value)
      .receive(
          [&](std::string& summary, std::string& json) {
            report.summary = std::move(summary);
            report.json = std::move(json);
          },
          [&](caf::error& e) { failed = system_->render(e); });
  if (!failed.empty()) return Status::Unavailable("the oracle did not report its plan statistics: " + failed);
  return report;
}

}  // namespace actorrec::trainer
