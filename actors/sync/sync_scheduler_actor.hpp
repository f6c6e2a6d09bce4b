// The sync_scheduler's actor shell: one trainer's queue of collectives.
//
//   (sync_atom, int64_t b, uint8_t kind, double sent_s, std::vector<float> x)
//       trainer -> scheduler: sum x over the trainers in rank order
//       (gpu::Collective::AllReduceRankOrder) and answer
//   (synced_atom, int64_t b, uint8_t kind, double behind_s, std::vector<float> sum)
//       behind_s: how long the job waited behind the previous background
//       (delayed) sync, i.e. the delayed sync's exposed time.
//
// Jobs run strictly in arrival order, and a trainer sends them as dense +
// critical of b, delayed of b, dense + critical of b+1, …: so delayed sync
// of b runs while b+1 computes and always ends before the critical sync of
// b+1 starts (never competing with it), and every trainer issues the same
// collectives in the same order, which Gloo (and the shared-memory group)
// requires. Detached: a collective blocks its thread.
#pragma once

#include <caf/actor.hpp>

#include <memory>

#include "gpu/gloo_collective.hpp"
#include "gpu/shared_memory_collective.hpp"

namespace actorrec::trainer {

enum class SyncKind : uint8_t { kCritical = 0, kDelayed = 1 };

struct SyncSchedulerArgs {
  gpu::GlooOptions gloo;  // rank, size, store, prefix
  // Set when every rank is a thread of this process: sums through memory
  // instead of Gloo (gloo.rank is the rank).
  std::shared_ptr<gpu::SharedMemoryGroup> shared_memory;
  caf::actor driver;  // error_atom when the collective breaks
};

caf::actor SpawnSyncScheduler(caf::actor_system& sys, SyncSchedulerArgs args);

}  // namespace actorrec::trainer
