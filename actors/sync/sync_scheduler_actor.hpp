// The sync_scheduler's actor shell: one trainer's queue of collectives.
//
//   (sync_atom, int64_t b, uint8_t kind, double sent_s, std::vector<float> x)
//       trainer -> scheduler: sum x over the trainers in rank order
//       (gpu::Collective::AllReduceRankOrder) and answer
//   (synced_atom, int64_t b, uint8_t kind, double behind_s, std::vector<float> sum)
//       behind_s: how long the job waited behind the previous background
//       (delayed) sync, i.e. the delayed sync's exposed time.
//   (sync_atom, int64_t b, uint8_t kind, double sent_s, uint64_t address, uint64_t n)
//       trainer -> scheduler: the same on n floats of the trainer's
//       backend's memory at `address` (ResidentAddress; trainer and
//       scheduler are one process), summed in place
//       (gpu::Collective::AllReduceResident); answered
//   (synced_atom, int64_t b, uint8_t kind, double behind_s, uint64_t n)
//       once the sum is in that buffer as the backend's later ops see it.
//
// Jobs run strictly in arrival order, and a trainer sends them as dense +
// critical of b, delayed of b, dense + critical of b+1, …: so delayed sync
// of b runs while b+1 computes and always ends before the critical sync of
// b+1 starts (never competing with it), and every trainer issues the same
// collectives in the same order, which every collective requires. Detached: a collective blocks its thread.
#pragma once

#include <caf/actor.hpp>

#include <cstdint>
#include <functional>
#include <memory>

#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "gpu/collectives.hpp"

namespace actorrec::trainer {

enum class SyncKind : uint8_t { kCritical = 0, kDelayed = 1 };

// A buffer of a backend's memory as the resident sync messages carry it.
inline uint64_t ResidentAddress(const float* p) { return reinterpret_cast<uintptr_t>(p); }
inline float* ResidentPointer(uint64_t address) { return reinterpret_cast<float*>(static_cast<uintptr_t>(address)); }

struct SyncSchedulerArgs {
  uint32_t rank = 0;  // the trainer's rank, for messages
  // Joins this rank's collective (shared memory, TLS or Gloo: the composition
  // root picks); called once, on the scheduler's own thread, and may block
  // until every rank has arrived.
  std::function<Result<std::unique_ptr<gpu::Collective>>()> connect;
  caf::actor driver;  // error_atom when the collective breaks
  // The trainer's backend, whose memory the resident sync messages' buffers
  // are in (null: the trainer sends only host vectors).
  gpu::Backend* backend = nullptr;
};

caf::actor SpawnSyncScheduler(caf::actor_system& sys, SyncSchedulerArgs args);

}  // namespace actorrec::trainer
