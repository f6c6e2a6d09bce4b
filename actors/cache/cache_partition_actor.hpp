// The cache_partition's actor shell: lands a plan's prefetched rows into the
// trainer's cache slots and writes the rows it is the writer of back to the
// embedding shards (messages/rows.capnp).
//
//   Frame<TrainerPlan>  oracle -> partition     fetch prefetch + privatePrefetch from the
//                                               shards (each RowFetch carries the plan's barrier)
//   Frame<Rows>         shard -> partition      copied into their slots; when the batch's
//                                               last row is in: (landed_atom, b) -> trainer
//   (write_atom, b)     trainer -> partition    b's updates are applied: send every shard
//                                               its WriteBack round of b (empty ones too)
//   Frame<WriteBackAck> shard -> partition      when every shard acked b:
//                                               (acked_atom, trainer, b, rows) -> driver
//   caf::actor          driver -> partition     the trainer to report landings to (set once)
//
// The slots belong to the trainer's TrainerCore. The partition writes a slot
// only for a batch whose barrier holds, and reads one only after the trainer
// has finished with it (write_atom), so the two never touch the same slot at
// once (the oracle's quarantine, slot_pool.hpp); the landed_atom message
// orders the copies before the trainer's reads.
#pragma once

#include <caf/actor.hpp>

#include <vector>

#include "actors/trainer/trainer_core.hpp"

namespace actorrec::trainer {

struct CachePartitionArgs {
  uint32_t trainer = 0;
  uint32_t partition = 0;
  TrainerCore* cache = nullptr;  // slots only; sized before the run starts
  uint32_t dim = 0;              // embedding floats per row; the rest of row_floats is state
  std::vector<caf::actor> shards;
  caf::actor driver;             // acked_atom and error_atom
};

caf::actor SpawnCachePartition(caf::actor_system& sys, CachePartitionArgs args);

}  // namespace actorrec::trainer
