// SnapshotStore: one member's copies of a cluster's recovery snapshots, in a
// directory of its own host (the agent keeps it in memory: a tmpfs directory
// it creates and removes, actors/node/agent.hpp). Plain C++, no CAF; the
// keeper actor (snapshot_keeper.hpp) is its shell.
//
// The directory has checkpoint.hpp's layout (batch-<k>/, LATEST), but each
// member's batch-<k> holds only the pieces it needs or keeps for another
// member: dense.safetensors (every member), the files of the shards it hosts
// and the copies of its replica partner's shard files. A snapshot is written
// in two steps: Put() into batch-<k>'s temporary directory, then Commit(),
// which renames it into place and replaces LATEST (the two newest are kept).
//
// Piece names come from peers: only plain file names ([A-Za-z0-9._-], not
// starting with '.') are accepted, so a piece never leaves the directory.
// Not thread-safe: one owner (the keeper actor).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.hpp"

namespace actorrec::trainer {

class SnapshotStore {
 public:
  explicit SnapshotStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }

  // The temporary directory of snapshot k, created empty on the first call
  // for k (a later Begin(k) starts it over); its absolute path.
  Result<std::string> Begin(uint64_t k);
  // Writes a piece of snapshot k into its temporary directory (begun if it
  // was not).
  Status Put(uint64_t k, const std::string& name, const std::string& bytes);
  // A piece of snapshot k not yet committed.
  Result<std::string> ReadPending(uint64_t k, const std::string& name) const;
  // Renames snapshot k into place and makes it LATEST. NotFound when k was
  // not begun.
  Status Commit(uint64_t k);

  // The batch LATEST names; nullopt when there is none.
  std::optional<uint64_t> Latest() const;
  // A piece of committed snapshot k; NotFound when this store lacks it.
  Result<std::string> Read(uint64_t k, const std::string& name) const;
  bool Has(uint64_t k, const std::string& name) const;
  // `length` bytes of it from `offset` (fewer at its end): a chunk to send.
  Result<std::string> ReadRange(uint64_t k, const std::string& name, uint64_t offset, uint64_t length) const;
  // Adds a piece to committed snapshot k (created if absent), fetched from
  // another member at recovery.
  Status Adopt(uint64_t k, const std::string& name, const std::string& bytes);
  // Makes snapshot k the LATEST and removes newer ones (snapshots the
  // coordinator never committed: the run rolls back past them).
  Status Select(uint64_t k);

  // The newest snapshot the coordinator committed, as its keeper told this
  // (another) member's store after its commit: the coordinator's LATEST,
  // replicated, so that a coordinator whose agent was lost too learns from
  // the others which snapshot the run resumes from (file COMMITTED).
  Status MarkCommitted(uint64_t k);
  // nullopt when the coordinator never told this store of one.
  std::optional<uint64_t> Committed() const;

  // Whether `name` may name a piece (a plain file name).
  static bool ValidName(const std::string& name);

 private:
  std::string dir_;
  std::map<uint64_t, std::string> pending_;  // k -> temporary directory
};

}  // namespace actorrec::trainer
