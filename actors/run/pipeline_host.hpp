// PipelineHost: the training pipeline's actors that one process hosts —
// all of them in `actorrec train`, one member's share in a cluster
// (`actorrec node`). It spawns them in dependency order (shards, cache
// partitions and sync schedulers, oracle, trainers, sampler), finding the
// actors it needs by their planned names ("embedding_shard[1]", "oracle",
// actor_plan.hpp) through a PipelineDirectory, and publishes each one it
// spawns there. Every process spawns in that same order, so a lookup only
// ever waits for an actor that some process is about to publish: in a
// cluster, the processes start each other's dependencies in turn.
//
// The run's driver (PipelineRun, on the coordinator) is found under
// kDriverName; in a cluster the sync schedulers rendezvous through the
// actor found under kRendezvousName (rendezvous.hpp).
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/actor_meter.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/run/checkpoint.hpp"
#include "actors/run/run_parts.hpp"
#include "actors/trainer/trainer_actor.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/nccl_collective.hpp"
#include "gpu/process_ranks.hpp"
#include "gpu/shared_memory_collective.hpp"
#include "gpu/tls_collective.hpp"

namespace actorrec::trainer {

inline constexpr const char* kDriverName = "run_driver";
inline constexpr const char* kRendezvousName = "gloo_rendezvous";

struct PipelineDirectory {
  // The actors of these names, in order, once they all exist; Unavailable
  // naming them when they do not appear in time.
  std::function<Result<std::vector<caf::actor>>(const std::vector<std::string>& names)> lookup;
  // Makes an actor this process spawned findable by its planned name.
  std::function<void(const PlannedActor& planned, const caf::actor& actor)> publish;
  // Where this process's sync schedulers listen for their peers.
  std::string gloo_address = "127.0.0.1";
  // In-process runs share one store; null: the cluster's rendezvous.
  std::shared_ptr<gloo::rendezvous::Store> gloo_store;
  std::string gloo_prefix;  // the same in every process of a run
  // Set when every trainer rank is a thread of this process: the sync
  // schedulers sum through memory (gpu/shared_memory_collective.hpp); the
  // same sums as over the network, bit for bit.
  std::shared_ptr<gpu::SharedMemoryGroup> shared_memory;
  // Set in a cluster (cluster.collective = "tls", the default): the sync
  // schedulers sum over mutual TLS with these keys (gpu/tls_collective.hpp),
  // each rank's peer checked against the member that hosts it
  // (rank_members). Null: Gloo's plain TCP. tls_error: why the keys could
  // not be made (the schedulers report it).
  std::shared_ptr<ClusterTls> tls;
  std::vector<std::string> rank_members;
  std::string tls_error;
  // Set with cluster.collective = "nccl" or "auto" (else empty), in a
  // cluster or in one process: the sync schedulers sum over NCCL between
  // GPUs (gpu/nccl_collective.hpp); with "auto" only when every rank says it
  // can (gpu/nccl_rendezvous.hpp: each trainer on a device of its own), else
  // over shared memory, TLS or Gloo as above.
  std::string nccl;
  std::string config_path;  // for the warnings about plain transports
};

// Where a process of a cluster sits: its actor system (with the middleman),
// the supervisor (local on the coordinator, else a proxy) and its member name.
struct ClusterSeat {
  caf::actor_system* sys = nullptr;
  caf::actor supervisor;
  std::string member;
  // Non-empty: recovery snapshots are kept in memory, in this member's
  // store directory (snapshot_keeper.hpp), and replicated between members.
  std::string snapshot_store;
};

// The directory of a cluster: lookups ask the supervisor (waiting up to
// cluster.join_timeout_ms), publishing registers the actor with it; the
// sync schedulers listen on the member's address and rendezvous through
// kRendezvousName, over TLS with keys from cluster.secret unless
// cluster.collective = "gloo" (then logs a warning: plain TCP).
PipelineDirectory ClusterDirectory(const config::Config& cfg, const ClusterSeat& seat);

class PipelineHost {
 public:
  struct Args {
    RunParts* parts = nullptr;  // outlives the host
    oracle::PlannerOptions planner;  // trainers, tables, first batch; the lookahead modes' plans
    // Slots of every hosted trainer's cache (CacheSlotsOf).
    uint64_t cache_slots = 0;
    uint32_t plans_ahead = 4;
    RunPosition start;          // where the run begins (a resumed run's position)
    std::vector<PlannedActor> hosted;  // this process's actors (ActorsOf)
  };

  // Spawns `args.hosted`. Fails (and stops what it spawned) when a lookup
  // fails or a planned actor is out of the run's range.
  static Result<std::unique_ptr<PipelineHost>> Start(caf::actor_system& sys, Args args, PipelineDirectory directory);
  // Stop() unless stopped.
  ~PipelineHost();
  PipelineHost(const PipelineHost&) = delete;
  PipelineHost& operator=(const PipelineHost&) = delete;

  // Asks every hosted actor to stop, lets go of them, and waits up to
  // `wait` for them to end. True when they all ended: only then may the
  // RunParts they use go away.
  bool Stop(std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  // The hosted actor that plays `planned`; null when another process hosts it.
  caf::actor Hosted(const PlannedActor& planned) const;
  const std::vector<caf::actor>& actors() const { return actors_; }
  // Every actor this host spawned, with its message counters (kept after Stop).
  const std::vector<NamedMeter>& meters() const { return meters_; }

 private:
  PipelineHost() = default;
  Status Spawn(caf::actor_system& sys, const PlannedActor& planned);
  // How sync scheduler `rank` joins its collective: shared memory, TLS,
  // Gloo or NCCL, as the directory says (looking up the cluster's rendezvous).
  Result<std::function<Result<std::unique_ptr<gpu::Collective>>()>> CollectiveOf(caf::actor_system& sys,
                                                                                 uint32_t rank, uint32_t size);
  // Whether trainer `rank` keeps its gradients in its backend's memory and
  // its scheduler sums them there (TrainerCore::KeepSumsResident,
  // Collective::AllReduceResident): its backend's memory is a device's and
  // its collective reads device buffers: the shared-device collective
  // (every rank a thread of this process, all on one device: CollectiveOf
  // picks it then) or NCCL (cluster.collective = "nccl"). Elsewhere (TLS, Gloo, and "auto",
  // which may end on TLS) its gradients come to the host as before: the
  // default AllReduceResident would run the backend's copies from the
  // scheduler's thread, beside the trainer's.
  bool SumsResident(uint32_t rank) const;

  Args args_;
  PipelineDirectory directory_;
  caf::actor driver_;
  std::vector<std::pair<PlannedActor, caf::actor>> spawned_;
  std::vector<caf::actor> actors_;
  std::vector<NamedMeter> meters_;
  std::vector<std::shared_ptr<std::atomic<bool>>> ended_;  // per hosted actor
  // This process's NCCL ranks, made together on the first Take (NCCL or auto).
  std::shared_ptr<gpu::ProcessRanks> nccl_ranks_;
};

}  // namespace actorrec::trainer
