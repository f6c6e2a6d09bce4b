#include "actors/run/pipeline_host.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "actors/common/ask.hpp"
#include "base/cluster_tls.hpp"
#include "actors/common/atoms.hpp"
#include "actors/node/role_shell.hpp"
#include "actors/embedding/shard_actor.hpp"
#include "actors/oracle/oracle_actor.hpp"
#include "actors/sampler/sampler_actor.hpp"
#include "actors/cache/cache_partition_actor.hpp"
#include "actors/run/rendezvous.hpp"
#include "actors/sync/sync_scheduler_actor.hpp"
#include "gpu/device_probe.hpp"
#include "gpu/shared_device_collective.hpp"

namespace actorrec::trainer {
namespace {

// The order every process spawns in: each role needs only actors of
// earlier ones (a trainer also needs its own partition and scheduler).
int SpawnRank(wire::Role role) {
  switch (role) {
    case wire::Role::EMBEDDING: return 0;
    case wire::Role::CACHE_PARTITION: return 1;
    case wire::Role::SYNC_SCHEDULER: return 2;
    case wire::Role::ORACLE: return 3;
    case wire::Role::TRAINER: return 4;
    case wire::Role::SAMPLER: return 5;
    default: return 6;
  }
}

std::string Named(wire::Role role, uint32_t index) {
  return std::string(RoleActorName(role)) + "[" + std::to_string(index) + "]";
}

std::vector<std::string> AllNamed(wire::Role role, uint32_t count) {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < count; ++i) names.push_back(Named(role, i));
  return names;
}

// Gloo's and NCCL's sockets carry the gradient sums in the clear, with no
// check of who connects (unlike the TLS collective).
void WarnPlainCollective(const std::string& collective, const std::string& config_path) {
  spdlog::warn("cluster.collective = \"{}\" ({}): the trainers' gradient sums between processes travel as "
               "plain, unauthenticated TCP; anyone who reaches a trainer's port can read them or change the "
               "model. Use it only on a trusted network",
               collective, config_path);
}

}  // namespace

PipelineDirectory ClusterDirectory(const config::Config& cfg, const ClusterSeat& seat) {
  PipelineDirectory directory;
  caf::actor_system* sys = seat.sys;
  const caf::actor supervisor = seat.supervisor;
  const auto timeout = std::chrono::milliseconds(cfg.cluster.join_timeout_ms);
  directory.lookup = [sys, supervisor, timeout](const std::vector<std::string>& names) -> Result<std::vector<caf::actor>> {
    std::vector<caf::actor> found;
    Status asked = AskAndWait(
        *sys, supervisor, timeout, [&](std::vector<caf::actor>& actors) { found = std::move(actors); },
        lookup_atom::value, names);
    if (!asked.ok()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return Status::Unavailable("the cluster did not provide " + list + " within cluster.join_timeout_ms (" +
                                 std::to_string(timeout.count()) + " ms): " + asked.message());
    }
    return found;
  };
  const std::string member = seat.member;
  directory.publish = [supervisor, member](const PlannedActor& planned, const caf::actor& actor) {
    caf::anon_send(supervisor, RegisterFrame(member, planned), actor);
  };
  directory.gloo_address = cfg.cluster.Find(member)->address;
  directory.gloo_prefix = "cluster-" + cfg.digest;
  const std::string& collective = cfg.cluster.collective;
  if (collective == "nccl" || collective == "auto") {
    directory.nccl = collective;
    directory.config_path = cfg.path;
  }
  if (collective == "gloo" || collective == "nccl") {  // no TLS keys
    WarnPlainCollective(collective, cfg.path);
    return directory;
  }
  for (const config::Member& m : cfg.cluster.members) {
    for (int k = 0; k < m.trainers; ++k) directory.rank_members.push_back(m.name);
  }
  // The sync schedulers' own keys: the same CA as the CAF transport's (one
  // secret), a certificate naming this member.
  auto tls = ClusterTls::Create(cfg.cluster.secret, member);
  if (tls.ok()) {
    directory.tls = std::move(tls).value();
  } else {
    directory.tls_error = "no TLS keys for the trainers' collective: " + tls.status().message();
  }
  return directory;
}

Result<std::unique_ptr<PipelineHost>> PipelineHost::Start(caf::actor_system& sys, Args args,
                                                          PipelineDirectory directory) {
  std::unique_ptr<PipelineHost> host(new PipelineHost());
  host->args_ = std::move(args);
  host->directory_ = std::move(directory);
  std::stable_sort(host->args_.hosted.begin(), host->args_.hosted.end(),
                   [](const PlannedActor& a, const PlannedActor& b) { return SpawnRank(a.role) < SpawnRank(b.role); });
  auto driver = host->directory_.lookup({kDriverName});
  if (!driver.ok()) return driver.status();
  host->driver_ = (*driver)[0];
  for (const PlannedActor& planned : host->args_.hosted) {
    if (Status st = host->Spawn(sys, planned); !st.ok()) {
      host->Stop();
      return Status::Unavailable("starting " + planned.name + ": " + st.message());
    }
  }
  return host;
}

Result<std::function<Result<std::unique_ptr<gpu::Collective>>()>> PipelineHost::CollectiveOf(caf::actor_system& sys,
                                                                                           uint32_t rank,
                                                                                           uint32_t size) {
  const std::chrono::milliseconds timeout = gpu::GlooOptions{}.timeout;
  std::shared_ptr<gloo::rendezvous::Store> store = directory_.gloo_store;
  if (!store && size > 1) {
    auto rendezvous = directory_.lookup({kRendezvousName});
    if (!rendezvous.ok()) return rendezvous.status();
    store = MakeActorStore(sys, (*rendezvous)[0], timeout);
  }
  gpu::GlooOptions group;
  group.rank = rank;
  group.size = size;
  group.address = directory_.gloo_address;
  group.timeout = timeout;
  group.prefix = directory_.gloo_prefix;
  group.store = store;
  // The host path: shared memory between threads of this process, else TLS
  // (or Gloo) between processes.
  std::function<Result<std::unique_ptr<gpu::Collective>>()> connect;
  std::string host_path;
  if (auto shared = directory_.shared_memory; shared && SumsResident(rank)) {
    // Over the trainers' buffers on their one device.
    gpu::Backend* backend = &args_.parts->trainers[rank]->backend();
    connect = [shared, rank, backend] { return gpu::ConnectSharedDevice(shared, rank, backend); };
    host_path = "the shared device";
  } else if (shared) {
    connect = [shared, rank] { return gpu::ConnectSharedMemory(shared, rank); };
    host_path = "shared memory";
  } else if (!directory_.tls_error.empty()) {
    return Status::Unavailable(directory_.tls_error);
  } else if (directory_.tls) {
    gpu::TlsCollectiveOptions tls;
    static_cast<gpu::GlooOptions&>(tls) = group;
    tls.tls = directory_.tls;
    tls.members = directory_.rank_members;
    connect = [tls] { return gpu::ConnectTls(tls); };
    host_path = "TLS";
  } else {
    connect = [group] { return gpu::ConnectGloo(group); };
    host_path = "Gloo";
  }
  if (directory_.nccl.empty() || size == 1) return connect;
  // NCCL between GPUs: "nccl" always (RunParts refused a process that
  // cannot), "auto" when every rank says it can, else `connect`. This
  // process's ranks are made together, in one NCCL group, by the first of
  // them to get there (gpu/process_ranks.hpp).
  const RunParts& p = *args_.parts;
  gpu::NcclReadiness ready = gpu::NcclReadinessOf(gpu::NcclSupport(), p.backend.cuda, p.backend.Line(), p.devices);
  for (const gpu::RankDevice& d : p.devices) {  // this rank's GPU, which no other rank may share
    if (!ready.ready || d.rank != rank) continue;
    ready.gpu = gpu::DeviceUuid(d.device);
    ready.device = d.device;
  }
  if (!nccl_ranks_) {
    gpu::NcclOptions nccl;
    static_cast<gpu::GlooOptions&>(nccl) = group;
    std::vector<uint32_t> ranks;
    for (const gpu::RankDevice& d : p.devices) ranks.push_back(d.rank);
    nccl_ranks_ = std::make_shared<gpu::ProcessRanks>(
        std::move(ranks), [nccl, devices = p.devices] { return gpu::ConnectNcclRanks(nccl, devices); });
  }
  const bool automatic = directory_.nccl == "auto";
  const std::string config_path = directory_.config_path;
  return std::function([group, ranks = nccl_ranks_, ready, automatic, connect, host_path,
                        config_path]() -> Result<std::unique_ptr<gpu::Collective>> {
    if (automatic) {
      auto agreed = gpu::AgreeOnNccl(*group.store, group.prefix, group.rank, group.size, ready, group.timeout);
      if (!agreed.ok()) return agreed.status();
      if (!agreed->all_ready) {
        spdlog::info("trainer rank {}: cluster.collective = \"auto\": summing over {}, not NCCL ({})", group.rank,
                     host_path, agreed->why_not);
        return connect();
      }
      spdlog::info("trainer rank {}: cluster.collective = \"auto\": summing over NCCL (every trainer rank runs "
                   "the CUDA backend on a device of its own)",
                   group.rank);
      WarnPlainCollective("auto", config_path);
    }
    return ranks->Take(group.rank);
  });
}

bool PipelineHost::SumsResident(uint32_t rank) const {
  const RunParts& p = *args_.parts;
  if (!p.trainers[rank]->backend().device_memory()) return false;
  const bool one_device = std::all_of(p.devices.begin(), p.devices.end(),
                                      [&](const gpu::RankDevice& d) { return d.device == p.devices.front().device; });
  return (directory_.shared_memory != nullptr && one_device) || directory_.nccl == "nccl";
}

Status PipelineHost::Spawn(caf::actor_system& sys, const PlannedActor& planned) {
  RunParts& p = *args_.parts;
  const uint32_t W = p.W(), S = p.S();
  const uint32_t i = planned.index;
  const uint32_t width = p.row_optimizer->width();
  const int64_t first_batch = static_cast<int64_t>(args_.planner.first_batch);
  auto local = [&](wire::Role role) -> caf::actor {
    for (const auto& [pl, actor] : spawned_) {
      if (pl.role == role && pl.index == i) return actor;
    }
    return {};
  };
  caf::actor actor;
  switch (planned.role) {
    case wire::Role::EMBEDDING: {
      if (i >= S) return Status::InvalidArgument("the run has " + std::to_string(S) + " shards");
      actor = embedding::SpawnShardActor(sys, {p.shards[i].get(), W, first_batch, width, driver_});
      break;
    }
    case wire::Role::CACHE_PARTITION: {
      if (i >= W) return Status::InvalidArgument("the run has " + std::to_string(W) + " trainers");
      auto shards = directory_.lookup(AllNamed(wire::Role::EMBEDDING, S));
      if (!shards.ok()) return shards.status();
      p.trainers[i]->EnsureSlots(static_cast<uint32_t>(args_.cache_slots));
      actor = SpawnCachePartition(sys, {i, 0, p.trainers[i].get(), width, *shards, driver_});
      break;
    }
    case wire::Role::SYNC_SCHEDULER: {
      if (i >= W) return Status::InvalidArgument("the run has " + std::to_string(W) + " trainers");
      auto connect = CollectiveOf(sys, i, W);
      if (!connect.ok()) return connect.status();
      actor = SpawnSyncScheduler(
          sys, {i, std::move(connect).value(), driver_, SumsResident(i) ? &p.trainers[i]->backend() : nullptr});
      break;
    }
    case wire::Role::ORACLE: {
      auto partitions = directory_.lookup(AllNamed(wire::Role::CACHE_PARTITION, W));
      if (!partitions.ok()) return partitions.status();
      oracle::OracleActorArgs oracle_args;
      oracle_args.options = args_.planner;
      if (IsDirectMode(p.cfg.training.mode)) {
        auto direct = DirectOptionsOf(p.cfg, p.table_rows, args_.planner.first_batch);
        if (!direct.ok()) return direct.status();
        oracle_args.direct = std::move(direct).value();
      }
      oracle_args.partitions = *partitions;
      oracle_args.driver = driver_;
      oracle_args.plans_ahead = args_.plans_ahead;
      oracle_args.row_bytes = uint64_t{p.row_optimizer->row_floats()} * sizeof(float);
      oracle_args.dedup_groups = p.cfg.dataset.dedup_groups;
      actor = oracle::SpawnOracleActor(sys, std::move(oracle_args));
      break;
    }
    case wire::Role::TRAINER: {
      if (i >= W) return Status::InvalidArgument("the run has " + std::to_string(W) + " trainers");
      auto oracle = directory_.lookup({"oracle"});
      if (!oracle.ok()) return oracle.status();
      TrainerActorArgs trainer;
      trainer.trainer = i;
      trainer.core = p.trainers[i].get();
      trainer.core->KeepSumsResident(SumsResident(i));
      trainer.partition = local(wire::Role::CACHE_PARTITION);
      trainer.scheduler = local(wire::Role::SYNC_SCHEDULER);
      if (!trainer.partition || !trainer.scheduler) {
        return Status::InvalidArgument("trainer[" + std::to_string(i) +
                                       "] needs its cache partition and sync scheduler in the same process");
      }
      trainer.oracle = (*oracle)[0];
      trainer.driver = driver_;
      trainer.first_batch = first_batch;
      actor = SpawnTrainerActor(sys, std::move(trainer));
      caf::anon_send(local(wire::Role::CACHE_PARTITION), actor);  // where it reports landings
      break;
    }
    case wire::Role::SAMPLER: {
      auto oracle = directory_.lookup({"oracle"});
      if (!oracle.ok()) return oracle.status();
      SamplerArgs sampler;
      sampler.source = p.TrainSource();
      sampler.options = p.SequenceOptions();
      sampler.options.start = args_.start.next;
      if (sampler.options.max_batches != 0) {
        // max_batches counts the whole run; a resumed one has done some.
        const uint64_t done = args_.start.batches;
        if (sampler.options.max_batches <= done) sampler.options.epochs = 0;
        sampler.options.max_batches = sampler.options.max_batches > done ? sampler.options.max_batches - done : 0;
      }
      sampler.consumer = (*oracle)[0];
      // With dedup groups the batches travel as IKJT: the groups, and every
      // other table deduplicated on its own.
      if (!p.cfg.dataset.dedup_groups.empty()) {
        sampler.dedup_groups = data::CompleteGroups(p.cfg.dataset.dedup_groups, p.T());
      }
      actor = SpawnSampler(sys, std::move(sampler));
      break;
    }
    default: return Status::InvalidArgument("no pipeline actor plays this role");
  }
  spawned_.emplace_back(planned, actor);
  actors_.push_back(actor);
  if (auto meter = MeterOf(actor)) meters_.push_back({planned.name, std::move(meter)});
  auto ended = std::make_shared<std::atomic<bool>>(false);
  actor->attach_functor([ended] { ended->store(true); });
  ended_.push_back(ended);
  directory_.publish(planned, actor);
  return Status::Ok();
}

caf::actor PipelineHost::Hosted(const PlannedActor& planned) const {
  for (const auto& [pl, actor] : spawned_) {
    if (pl.role == planned.role && pl.index == planned.index) return actor;
  }
  return {};
}

bool PipelineHost::Stop(std::chrono::milliseconds wait) {
  for (const caf::actor& a : actors_) caf::anon_send(a, stop_atom::value);
  actors_.clear();
  spawned_.clear();
  driver_ = nullptr;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    bool all = true;
    for (const auto& e : ended_) all = all && e->load();
    if (all || std::chrono::steady_clock::now() >= deadline) return all;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

PipelineHost::~PipelineHost() { Stop(); }

}  // namespace actorrec::trainer
