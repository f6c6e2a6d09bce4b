// Recovery snapshots kept in memory and replicated between members
// (docs/reliability.md): each member process runs a keeper, the shell of its
// SnapshotStore (snapshot_store.hpp), published with the supervisor as
// KeeperName(member). The coordinator's driver writes a snapshot through
// the keepers (PipelineRun::SaveCheckpoint):
//
//   (snap_begin_atom, k)            -> std::string  the temporary directory of snapshot k on the keeper's host
//   (snap_put_atom, k, name, bytes) -> ok_atom      a piece into it
//   (snap_send_atom, k, name, to)   -> ok_atom      the keeper's pending piece, put to keeper `to` in chunks:
//   (snap_offer_atom, k, name, size, digest) -> ok_atom   announces it there,
//   (snap_chunk_atom, k, name, offset, bytes) -> ok_atom  each chunk in order (piece_chunks.hpp),
//   (snap_seal_atom, k, name)       -> ok_atom      checked whole (Corruption naming it) and put
//   (snap_commit_atom, k)           -> ok_atom      snapshot k into place, LATEST
//   (snap_latest_atom)              -> int64_t      the batch of LATEST, -1 without one
//   (snap_stat_atom, k, name)       -> (size, digest)  a piece of committed snapshot k: its size and XXH3,
//   (snap_get_atom, k, name, offset, length) -> std::string  and its bytes, a chunk at a time
//   (snap_mark_atom, k)             -> ok_atom      the coordinator committed k (its LATEST, replicated)
//   (snap_marked_atom)              -> int64_t      the newest k marked so, -1 without one
//
// Each shard writes its file into its own member's keeper directory, which
// sends a copy to ReplicaHolder(member); the coordinator's keeper sends
// dense.safetensors to every other keeper; the keepers commit, the
// coordinator's last, so that its LATEST names a snapshot every member has;
// then every other keeper is told (snap_mark_atom), so that the decision
// survives the coordinator's own store (RestoreCoordinatorFromKeepers).
#pragma once

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include <functional>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "configs/config.hpp"

namespace actorrec::trainer {

using snap_begin_atom = caf::atom_constant<caf::atom("arsnbegin")>;
using snap_put_atom = caf::atom_constant<caf::atom("arsnput")>;
using snap_send_atom = caf::atom_constant<caf::atom("arsnsend")>;
using snap_commit_atom = caf::atom_constant<caf::atom("arsncommit")>;
using snap_latest_atom = caf::atom_constant<caf::atom("arsnlatest")>;
using snap_get_atom = caf::atom_constant<caf::atom("arsnget")>;
using snap_offer_atom = caf::atom_constant<caf::atom("arsnoffer")>;
using snap_chunk_atom = caf::atom_constant<caf::atom("arsnchunk")>;
using snap_seal_atom = caf::atom_constant<caf::atom("arsnseal")>;
using snap_stat_atom = caf::atom_constant<caf::atom("arsnstat")>;
using snap_mark_atom = caf::atom_constant<caf::atom("arsnmark")>;
using snap_marked_atom = caf::atom_constant<caf::atom("arsnmarked")>;

// The dense piece every member keeps.
inline constexpr const char* kDensePiece = "dense.safetensors";

// The name `member`'s keeper is published under.
std::string KeeperName(const std::string& member);

// The members whose keepers hold pieces of every snapshot: all but the
// spares (IsSpare), in the topology's order. A spare that took over a
// member keeps that member's pieces under its name.
std::vector<std::string> KeepingMembers(const config::ClusterConfig& cluster);

// The member that keeps a copy of `member`'s shard files: the next of
// KeepingMembers, wrapping; empty when the cluster has one.
std::string ReplicaHolder(const config::ClusterConfig& cluster, const std::string& member);

// A keeper of the snapshot store in `dir` (created if absent).
caf::actor SpawnSnapshotKeeper(caf::actor_system& sys, std::string dir);

using KeeperLookup = std::function<Result<std::vector<caf::actor>>(const std::vector<std::string>& names)>;

// A member (not the coordinator) joining a cluster that snapshots into
// keepers: asks the coordinator's keeper which snapshot the run resumes
// from; the pieces this member needs (`pieces`) that its own store lacks
// (its agent was restarted too, say) are fetched from the other keepers,
// ReplicaHolder first; that snapshot becomes its store's LATEST. Returns the
// store's directory to resume from, or "" when the run has no snapshot yet
// (it starts from the beginning). NotFound naming the piece when no keeper
// has it.
Result<std::string> RestoreFromKeepers(caf::actor_system& sys, const config::Config& cfg, const std::string& member,
                                       const std::vector<std::string>& pieces, const KeeperLookup& lookup,
                                       const std::string& dir);

// The coordinator starting with a store that names no snapshot (its agent
// was lost too and was started again by hand; or the cluster's first
// start): asks every other member's keeper for the newest snapshot the
// coordinator committed (snap_marked_atom), takes the newest any of them
// names, fetches the pieces it needs (`pieces`) from them, ReplicaHolder
// first, and makes it its store's LATEST. Returns the store's directory to
// resume from, or "" when no member names one (a fresh run). Called before
// the coordinator's keeper is published: the other members wait for it
// (RestoreFromKeepers) and so never see the empty store's answer.
Result<std::string> RestoreCoordinatorFromKeepers(caf::actor_system& sys, const config::Config& cfg,
                                                  const std::vector<std::string>& pieces, const KeeperLookup& lookup,
                                                  const std::string& dir);

}  // namespace actorrec::trainer
