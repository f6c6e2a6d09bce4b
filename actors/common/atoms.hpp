// Atoms shared by the actor shells (CAF 0.17 spelling; at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace actorrec {

// Periodic self-message: heartbeats, liveness and join-timeout checks.
using tick_atom = caf::atom_constant<caf::atom("artick")>;
// Asks the supervisor to answer once every member and actor is registered.
using ready_atom = caf::atom_constant<caf::atom("arready")>;
// Asks an actor to end the run (from a signal or the end of local work).
using stop_atom = caf::atom_constant<caf::atom("arstop")>;

}  // namespace actorrec

namespace actorrec {

// A consumer grants the batch_sampler `n` more batches: (credit_atom, uint32_t n).
using credit_atom = caf::atom_constant<caf::atom("arcredit")>;
// The sampler's last word: (end_atom, uint64_t batches_sent). Sent after the
// last batch, or with an error string when the source failed.
using end_atom = caf::atom_constant<caf::atom("arend")>;
// Self-message that produces the next batch, one per mailbox turn so that
// credits and stop requests are seen between batches.
using pump_atom = caf::atom_constant<caf::atom("arpump")>;

}  // namespace actorrec

namespace actorrec {

// The training pipeline (actors/run/pipeline_run.hpp), in-process parts.
// A role's failure, to the run's driver: (error_atom, std::string what).
using error_atom = caf::atom_constant<caf::atom("arerror")>;
// cache_partition -> trainer: (landed_atom, int64_t batch), every prefetched
// row of the batch is in its slot.
using landed_atom = caf::atom_constant<caf::atom("arlanded")>;
// trainer -> cache_partition: (write_atom, int64_t batch), the batch's updates
// (delayed sync included) are applied: write its evictions back.
using write_atom = caf::atom_constant<caf::atom("arwrite")>;
// cache_partition -> driver: (acked_atom, uint32_t trainer, int64_t batch,
// uint64_t rows), every shard applied the trainer's write-backs of the batch.
using acked_atom = caf::atom_constant<caf::atom("aracked")>;
// trainer -> sync_scheduler: (sync_atom, int64_t batch, uint8_t kind,
// std::vector<float>); answered with (synced_atom, batch, kind, the sum).
using sync_atom = caf::atom_constant<caf::atom("arsync")>;
using synced_atom = caf::atom_constant<caf::atom("arsynced")>;
// trainer -> driver and oracle: the batch is settled (see trainer_actor.hpp).
using settled_atom = caf::atom_constant<caf::atom("arsettled")>;
// driver -> oracle: (hold_atom, int64_t last) plans no batch after `last`
// until a later hold_atom raises it (pauses for evaluation and checkpoints).
using hold_atom = caf::atom_constant<caf::atom("arhold")>;
// driver -> shard: (digest_atom) answered with the ShardStore digest.
using digest_atom = caf::atom_constant<caf::atom("ardigest")>;
// driver -> shard: (usage_atom) answered with (uint64_t resident rows,
// uint64_t bytes): what the shard holds, asked of the actor that owns it.
using usage_atom = caf::atom_constant<caf::atom("arusage")>;
// driver -> shard or trainer, while the run is quiet (evaluation):
// (peek_atom, Frame<RowFetch>) answered with a Frame<Rows> of the rows'
// latest values, changing nothing: a shard gives every row it is asked for
// (an untouched one as its initial value, not created), a trainer only the
// rows its cache holds (the answer's keys say which).
using peek_atom = caf::atom_constant<caf::atom("arpeek")>;
// driver -> trainer: (dense_atom) answered with (std::vector<float>
// parameters, std::vector<float> dense optimizer state): trainer 0's
// replica, for evaluation and checkpoints on the coordinator of a cluster.
using dense_atom = caf::atom_constant<caf::atom("ardense")>;
// Checkpoints, while the run is quiet (checkpoint.hpp):
//   driver -> trainer: (cached_atom) answered with a Frame<Rows> of every
//     row its cache holds;
//   driver -> shard: (store_atom, Frame<WriteBack>) stores those rows
//     outside the write-back protocol (the ledger counts nothing; a cached
//     row is never fetched, and its eviction writes it back again later),
//     answered with ok_atom;
//   driver -> shard: (checkpoint_atom, std::string path, int64_t batch)
//     writes the shard's checkpoint file, answered with ok_atom; path is on
//     the shard's host (a directory every member sees);
//   driver -> trainer or shard: (position_atom) answered with the batch its
//     run starts at, so that a member resumed from another checkpoint (or
//     not resumed) is named instead of stalling the run.
using cached_atom = caf::atom_constant<caf::atom("arcached")>;
using store_atom = caf::atom_constant<caf::atom("arstore")>;
using checkpoint_atom = caf::atom_constant<caf::atom("arckpt")>;
using position_atom = caf::atom_constant<caf::atom("arposit")>;
using ok_atom = caf::atom_constant<caf::atom("arok")>;
// driver -> oracle: (stats_atom) answered with (std::string summary,
// std::string json): the PlanStats of every batch planned so far.
using stats_atom = caf::atom_constant<caf::atom("arstats")>;

}  // namespace actorrec

namespace actorrec {
// oracle -> driver: (report_atom, std::string) how L was chosen, once L is known.
using report_atom = caf::atom_constant<caf::atom("arreport")>;
}  // namespace actorrec

namespace actorrec {
// The cluster's directory, kept by the supervisor (supervisor_actor.hpp):
// (lookup_atom, std::vector<std::string> names) is answered with
// std::vector<caf::actor>, in order, once every name is registered;
// (publish_atom, std::string name, caf::actor) adds an actor that is no role
// of the topology (the coordinator's run driver, the Gloo rendezvous).
using lookup_atom = caf::atom_constant<caf::atom("arlookup")>;
using publish_atom = caf::atom_constant<caf::atom("arpublish")>;
// The Gloo rendezvous of a cluster (actors/run/rendezvous.hpp):
// (put_atom, key, std::vector<char>) stores; (get_atom, key) is answered with
// the value once some rank has stored it.
using put_atom = caf::atom_constant<caf::atom("arput")>;
using get_atom = caf::atom_constant<caf::atom("arget")>;
}  // namespace actorrec
