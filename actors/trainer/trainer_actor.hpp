// The trainer's actor shell: runs TrainerCore on each batch once its plan,
// its slice and its rows are there, and exchanges gradients through its
// sync_scheduler.
//
//   (Frame<TrainerPlan>, Frame<Batch> slice, uint64_t batch_samples)  oracle -> trainer
//       the slice holds this trainer's labels and dense features; its sparse
//       features are the plan's (slots); batch_samples is the global batch size
//   (landed_atom, b)                          partition -> trainer
//   (synced_atom, b, kind, behind_s, sum)     scheduler -> trainer
//   digest_atom -> uint64_t                   driver -> trainer: DenseDigest of its replica
//   dense_atom -> (parameters, optimizer state)   driver -> trainer: its dense replica
//   (peek_atom, Frame<RowFetch>) -> Frame<Rows>   driver -> trainer: the asked rows its cache holds
//   cached_atom -> Frame<Rows>                driver -> trainer: every row its cache holds
//   position_atom -> int64_t                  driver -> trainer: the batch it starts at
//
// One batch b, in order (ARCHITECTURE §3):
//   1. wait for plan(b), slice(b), landed(b) and the critical sync of b−1;
//   2. Compute; apply private rows (owner only, no sync);
//   3. send dense + critical gradients, then delayed gradients, to the
//      scheduler; apply the critical sum (and the dense step) when it comes
//      back, and start b+1;
//   4. apply the delayed sum when it comes back (during or after b+1's
//      compute: b+1 never reads those rows), then b is settled: its evictions
//      go back to the shards (write_atom to the partition), and
//      (settled_atom, …) goes to the driver and the oracle.
// Detached: Compute holds its thread for the length of a batch.
#pragma once

#include <caf/actor.hpp>

#include <memory>
#include <unordered_map>

#include "actors/trainer/trainer_core.hpp"

namespace actorrec::trainer {

// Indexes of the numbers a trainer reports with each settled batch.
enum SettledTime : size_t {
  kWaitRows, kForward, kBackward, kCriticalSync, kExposedDelayed, kApply,
  kDelayedSync,  // from the delayed gradients sent to their sum back (in the background)
  kStreamWaitRows, kStreamWaitSync,  // the compute stream's waits (TrainerCore::TakeStreamWaits)
  kWaitsOnDevice,  // 1: those two by the device's clock, 0: the host's
  kSettledTimes
};
enum SettledCount : size_t {
  kPrefetched,       // rows this trainer fetched (shared + private misses)
  kPrivateMisses,
  kSharedMisses,
  kPrivateUpdated,   // private rows
  kCritical,
  kDelayed,
  kWritten,          // rows this trainer writes back
  kRows,             // distinct cache slots its slice reads
  kReadMisses,       // of those, rows fetched for this batch
  kEvictions,        // slots freed after the batch
  kSyncFloats,       // floats sent to the scheduler (dense + critical + delayed)
  kOccupancy,        // the plan's occupancy of this trainer's cache
  kLookahead,        // the plan's L
  kSettledCounts
};

// The rows a trainer's cache holds, (table << 32 | row) -> slot, kept by
// the trainer actor from its plans; the driver asks for them by message
// (cached_atom, peek_atom).
using CachedRows = std::unordered_map<uint64_t, uint32_t>;
inline uint64_t CachedRowKey(uint32_t table, uint32_t row) { return (uint64_t{table} << 32) | row; }

struct TrainerActorArgs {
  uint32_t trainer = 0;
  TrainerCore* core = nullptr;
  caf::actor partition;
  caf::actor scheduler;
  caf::actor oracle;  // credits: (settled_atom, trainer, b)
  caf::actor driver;  // (settled_atom, trainer, b, epoch, index, samples, loss_sum, times, counts), error_atom
  int64_t first_batch = 0;
};

caf::actor SpawnTrainerActor(caf::actor_system& sys, TrainerActorArgs args);

}  // namespace actorrec::trainer
