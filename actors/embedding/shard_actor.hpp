// The embedding_shard's actor shell: serves RowFetch once its barrier holds,
// applies WriteBack rounds and acknowledges them (messages/rows.capnp).
//
//   Frame<RowFetch>   partition -> shard   answered with Frame<Rows>, at once or
//                                          when the WriteBackLedger allows its barrier
//   Frame<WriteBack>  partition -> shard   applied, answered with Frame<WriteBackAck>
//   digest_atom       -> uint64_t          the store's digest (when the run is quiet)
//   (peek_atom, Frame<RowFetch>) -> Frame<Rows>  the rows' values, none created (evaluation)
//   (store_atom, Frame<WriteBack>) -> ok_atom    rows stored outside the protocol (checkpoints)
//   (checkpoint_atom, path, batch) -> ok_atom    the store's checkpoint file written at path
//   position_atom     -> int64_t           the batch the run starts at
//   usage_atom        -> (uint64_t, uint64_t)  resident rows and bytes held, at any time
// A malformed message or a protocol break (a key this shard does not own, a
// write-back round out of order) goes to `errors` as (error_atom, text naming
// the shard and the peer's trainer) and is not applied.
#pragma once

#include <caf/actor.hpp>

#include "actors/embedding/shard_store.hpp"

namespace actorrec::embedding {

struct ShardActorArgs {
  ShardStore* store = nullptr;  // owned by the run; only this actor touches it while the run is busy
  uint32_t writers = 1;         // the trainers, each sending one write-back round per batch
  int64_t first_batch = 0;
  uint32_t dim = 0;             // floats of embedding per row (the rest is optimizer state)
  caf::actor errors;
};

caf::actor SpawnShardActor(caf::actor_system& sys, ShardActorArgs args);

}  // namespace actorrec::embedding
