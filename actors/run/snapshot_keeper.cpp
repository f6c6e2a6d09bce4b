// The keeper actor of a member's snapshot store, and a member's restore.
#include "actors/run/snapshot_keeper.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "actors/common/ask.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/run/piece_chunks.hpp"
#include "actors/run/snapshot_store.hpp"
#include "base/digest.hpp"

namespace actorrec::trainer {
namespace {

// A piece is a shard's whole file (gigabytes at full scale): the same
// hour the driver gives a checkpoint's files.
constexpr std::chrono::seconds kPieceWait{3600};

struct KeeperState {
  static inline const char* name = "snapshot_keeper";
  std::unique_ptr<SnapshotStore> store;
  // Pieces arriving in chunks from another keeper, by snapshot and name.
  std::map<std::pair<uint64_t, std::string>, PieceAssembly> incoming;
};

// Sends chunk `offset` of `bytes` and the ones after it to keeper `to`,
// one at a time, then seals the piece there; delivers ok or the first error.
void SendChunks(caf::stateful_actor<KeeperState>* self, caf::actor to, uint64_t k, std::string name,
                std::shared_ptr<const std::string> bytes, uint64_t offset, uint64_t chunk,
                caf::response_promise rp) {
  if (offset >= bytes->size() && !(offset == 0 && bytes->empty())) {
    self->request(to, kPieceWait, snap_seal_atom::value, k, name)
        .then([rp](ok_atom) mutable { rp.deliver(ok_atom::value); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
    return;
  }
  const uint64_t n = std::min<uint64_t>(chunk, bytes->size() - offset);
  self->request(to, kPieceWait, snap_chunk_atom::value, k, name, offset, bytes->substr(offset, n))
      .then(
          [=](ok_atom) mutable {
            // An empty piece is one empty chunk: step past it.
            SendChunks(self, to, k, name, bytes, n == 0 ? 1 : offset + n, chunk, rp);
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

// A drill (docs/reliability.md): with ACTORREC_DRILL_KILL_AT_COMMIT=1 in
// its environment, a keeper whose store holds the file drill-kill-at-commit
// removes it and kills its own process at the next commit: a member lost in
// the middle of a snapshot, some members having committed it and the
// coordinator not.
void DrillKillAtCommit(const std::string& dir) {
  const char* on = std::getenv("ACTORREC_DRILL_KILL_AT_COMMIT");
  if (on == nullptr || std::string(on) != "1") return;
  if (::unlink((dir + "/drill-kill-at-commit").c_str()) == 0) ::raise(SIGKILL);
}

caf::error Failed(const Status& st) { return caf::make_error(caf::sec::runtime_error, st.ToString()); }

caf::behavior Keeper(caf::stateful_actor<KeeperState>* self, std::string dir) {
  self->state.store = std::make_unique<SnapshotStore>(std::move(dir));
  self->set_default_handler(ReportUnexpected);
  return {
      [=](snap_begin_atom, uint64_t k) -> caf::result<std::string> {
        auto tmp = self->state.store->Begin(k);
        if (!tmp.ok()) return Failed(tmp.status());
        return *tmp;
      },
      [=](snap_put_atom, uint64_t k, const std::string& name, const std::string& bytes) -> caf::result<ok_atom> {
        if (Status st = self->state.store->Put(k, name, bytes); !st.ok()) return Failed(st);
        return ok_atom::value;
      },
      [=](snap_send_atom, uint64_t k, const std::string& name, const caf::actor& to) -> caf::result<ok_atom> {
        auto bytes = self->state.store->ReadPending(k, name);
        if (!bytes.ok()) return Failed(bytes.status());
        auto piece = std::make_shared<const std::string>(std::move(bytes).value());
        auto rp = self->make_response_promise();
        const uint64_t size = piece->size(), digest = Digest64(*piece);
        self->request(to, kPieceWait, snap_offer_atom::value, k, name, size, digest)
            .then([=](ok_atom) mutable { SendChunks(self, to, k, name, piece, 0, PieceChunkBytes(), rp); },
                  [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return caf::delegated<ok_atom>();
      },
      // A piece put by another keeper, in chunks: announced, then chunk by
      // chunk, then sealed (checked whole and put into snapshot k).
      [=](snap_offer_atom, uint64_t k, const std::string& name, uint64_t size, uint64_t digest) -> caf::result<ok_atom> {
        if (!SnapshotStore::ValidName(name)) {
          return Failed(Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name"));
        }
        auto& incoming = self->state.incoming;
        incoming.erase({k, name});
        incoming.emplace(std::pair{k, name}, PieceAssembly(name + " of snapshot batch-" + std::to_string(k) + " in " +
                                                               self->state.store->dir(),
                                                           size, digest));
        return ok_atom::value;
      },
      [=](snap_chunk_atom, uint64_t k, const std::string& name, uint64_t offset,
          const std::string& bytes) -> caf::result<ok_atom> {
        auto it = self->state.incoming.find({k, name});
        if (it == self->state.incoming.end()) {
          return Failed(Status::Corruption(name + " of snapshot batch-" + std::to_string(k) +
                                           ": a chunk arrived that no offer announced"));
        }
        if (Status st = it->second.Add(offset, bytes); !st.ok()) {
          self->state.incoming.erase(it);
          return Failed(st);
        }
        return ok_atom::value;
      },
      [=](snap_seal_atom, uint64_t k, const std::string& name) -> caf::result<ok_atom> {
        auto it = self->state.incoming.find({k, name});
        if (it == self->state.incoming.end()) {
          return Failed(Status::Corruption(name + " of snapshot batch-" + std::to_string(k) +
                                           ": sealed without an offer"));
        }
        auto whole = it->second.Finish();
        const uint64_t chunks = it->second.chunks();
        self->state.incoming.erase(it);
        if (!whole.ok()) return Failed(whole.status());
        if (Status st = self->state.store->Put(k, name, *whole); !st.ok()) return Failed(st);
        spdlog::debug("snapshot batch-{}: received {} ({} bytes in {} chunk(s))", k, name, whole->size(), chunks);
        return ok_atom::value;
      },
      [=](snap_commit_atom, uint64_t k) -> caf::result<ok_atom> {
        DrillKillAtCommit(self->state.store->dir());
        if (Status st = self->state.store->Commit(k); !st.ok()) return Failed(st);
        return ok_atom::value;
      },
      [=](snap_latest_atom) -> int64_t {
        const auto latest = self->state.store->Latest();
        return latest ? static_cast<int64_t>(*latest) : -1;
      },
      [=](snap_stat_atom, uint64_t k, const std::string& name) -> caf::result<uint64_t, uint64_t> {
        auto bytes = self->state.store->Read(k, name);
        if (!bytes.ok()) return Failed(bytes.status());
        return caf::result<uint64_t, uint64_t>(static_cast<uint64_t>(bytes->size()), Digest64(*bytes));
      },
      [=](snap_get_atom, uint64_t k, const std::string& name, uint64_t offset,
          uint64_t length) -> caf::result<std::string> {
        auto bytes = self->state.store->ReadRange(k, name, offset, length);
        if (!bytes.ok()) return Failed(bytes.status());
        return std::move(bytes).value();
      },
      [=](snap_mark_atom, uint64_t k) -> caf::result<ok_atom> {
        if (Status st = self->state.store->MarkCommitted(k); !st.ok()) return Failed(st);
        return ok_atom::value;
      },
      [=](snap_marked_atom) -> int64_t {
        const auto marked = self->state.store->Committed();
        return marked ? static_cast<int64_t>(*marked) : -1;
      },
  };
}

}  // namespace

std::string KeeperName(const std::string& member) { return "snapshot_keeper@" + member; }

std::vector<std::string> KeepingMembers(const config::ClusterConfig& cluster) {
  std::vector<std::string> names;
  for (const config::Member& m : cluster.members) {
    if (!IsSpare(m)) names.push_back(m.name);
  }
  return names;
}

std::string ReplicaHolder(const config::ClusterConfig& cluster, const std::string& member) {
  const std::vector<std::string> m = KeepingMembers(cluster);
  if (m.size() < 2) return "";
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == member) return m[(i + 1) % m.size()];
  }
  return "";
}

caf::actor SpawnSnapshotKeeper(caf::actor_system& sys, std::string dir) { return sys.spawn(Keeper, std::move(dir)); }

namespace {

// Piece `name` of committed snapshot k from `keeper` (of member `holder`),
// chunk by chunk, checked whole against the size and digest it announced.
Result<std::string> FetchPiece(caf::actor_system& sys, const caf::actor& keeper, uint64_t k, const std::string& name,
                               const std::string& holder) {
  const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kPieceWait);
  uint64_t size = 0, digest = 0;
  Status st = AskAndWait(
      sys, keeper, wait,
      [&](uint64_t s, uint64_t d) {
        size = s;
        digest = d;
      },
      snap_stat_atom::value, k, name);
  if (!st.ok()) return st;
  PieceAssembly piece(name + " of snapshot batch-" + std::to_string(k) + " from member '" + holder + "'", size, digest);
  const uint64_t chunk = PieceChunkBytes();
  for (uint64_t offset = 0; offset < size || offset == 0; offset += chunk) {
    std::string bytes;
    st = AskAndWait(
        sys, keeper, wait, [&](std::string& b) { bytes = std::move(b); }, snap_get_atom::value, k, name, offset,
        std::min(chunk, size - offset));
    if (!st.ok()) return st;
    if (Status a = piece.Add(offset, bytes); !a.ok()) return a;
    if (size == 0) break;
  }
  return piece.Finish();
}

// Fetches the pieces of committed snapshot k that `member`'s store lacks
// from the other members' keepers (ReplicaHolder first, then the
// coordinator, then the rest in the topology's order), then makes k the
// store's LATEST. NotFound naming the piece when no keeper has it.
Status FetchMissingPieces(caf::actor_system& sys, const config::Config& cfg, const std::string& member, uint64_t k,
                          const std::vector<std::string>& pieces, const KeeperLookup& lookup, SnapshotStore* store) {
  const std::string coordinator = cfg.cluster.Coordinator().name;
  std::vector<std::string> holders;
  for (const std::string& h : {ReplicaHolder(cfg.cluster, member), coordinator}) {
    if (!h.empty() && h != member && std::find(holders.begin(), holders.end(), h) == holders.end()) holders.push_back(h);
  }
  for (const std::string& m : KeepingMembers(cfg.cluster)) {
    if (m != member && std::find(holders.begin(), holders.end(), m) == holders.end()) holders.push_back(m);
  }
  for (const std::string& piece : pieces) {
    if (store->Has(k, piece)) continue;
    std::string why;
    bool fetched = false;
    for (const std::string& holder : holders) {
      auto keeper = lookup({KeeperName(holder)});
      if (!keeper.ok()) {
        why += "; " + holder + ": " + keeper.status().message();
        continue;
      }
      auto bytes = FetchPiece(sys, (*keeper)[0], k, piece, holder);
      if (!bytes.ok()) {
        // A damaged copy is never kept; another holder may have a good one.
        why += "; " + holder + ": " + bytes.status().message();
        if (bytes.status().code() == Status::Code::kCorruption) spdlog::error("{}", bytes.status().message());
        continue;
      }
      if (Status a = store->Adopt(k, piece, *bytes); !a.ok()) return a;
      spdlog::info("snapshot batch-{}: fetched {} ({} bytes in {} chunk(s)) from member '{}'", k, piece, bytes->size(),
                   ChunkCount(bytes->size(), PieceChunkBytes()), holder);
      fetched = true;
      break;
    }
    if (!fetched) {
      return Status::NotFound("no member keeps " + piece + " of snapshot batch-" + std::to_string(k) +
                              " that the run resumes from" + why);
    }
  }
  return store->Select(k);
}

}  // namespace

Result<std::string> RestoreFromKeepers(caf::actor_system& sys, const config::Config& cfg, const std::string& member,
                                       const std::vector<std::string>& pieces, const KeeperLookup& lookup,
                                       const std::string& dir) {
  const std::string coordinator = cfg.cluster.Coordinator().name;
  auto found = lookup({KeeperName(coordinator)});
  if (!found.ok()) return found.status();
  int64_t latest = -1;
  const auto wait = std::chrono::milliseconds(cfg.cluster.join_timeout_ms);
  if (Status st = AskAndWait(sys, (*found)[0], wait, [&](int64_t k) { latest = k; }, snap_latest_atom::value);
      !st.ok()) {
    return Status::Unavailable("the snapshot keeper of coordinator '" + coordinator +
                               "' did not say which snapshot the run resumes from: " + st.message());
  }
  if (latest < 0) return std::string();
  SnapshotStore store(dir);
  if (Status st = FetchMissingPieces(sys, cfg, member, static_cast<uint64_t>(latest), pieces, lookup, &store);
      !st.ok()) {
    return st;
  }
  return dir;
}

Result<std::string> RestoreCoordinatorFromKeepers(caf::actor_system& sys, const config::Config& cfg,
                                                  const std::vector<std::string>& pieces, const KeeperLookup& lookup,
                                                  const std::string& dir) {
  SnapshotStore store(dir);
  if (store.Latest()) return dir;  // its own store (the agent restarted only the worker)
  const std::string coordinator = cfg.cluster.Coordinator().name;
  std::vector<std::string> others;
  for (const std::string& m : KeepingMembers(cfg.cluster)) {
    if (m != coordinator) others.push_back(m);
  }
  if (others.empty()) return std::string();
  const auto wait = std::chrono::milliseconds(cfg.cluster.join_timeout_ms);
  int64_t newest = -1;
  std::string named_by;
  for (const std::string& m : others) {
    auto keeper = lookup({KeeperName(m)});
    if (!keeper.ok()) return keeper.status();
    int64_t marked = -1;
    if (Status st = AskAndWait(sys, (*keeper)[0], wait, [&](int64_t k) { marked = k; }, snap_marked_atom::value);
        !st.ok()) {
      return Status::Unavailable("the snapshot keeper of member '" + m +
                                 "' did not say which snapshot the coordinator committed last: " + st.message());
    }
    if (marked > newest) {
      newest = marked;
      named_by = m;
    }
  }
  if (newest < 0) return std::string();
  spdlog::info("snapshot batch-{}: the newest the coordinator committed, as member '{}' keeps it; this store had none",
               newest, named_by);
  if (Status st = FetchMissingPieces(sys, cfg, coordinator, static_cast<uint64_t>(newest), pieces, lookup, &store);
      !st.ok()) {
    return st;
  }
  return dir;
}

}  // namespace actorrec::trainer
