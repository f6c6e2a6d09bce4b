// The keeper actor of a member's snapshot store, and a member's restore.
#include "actors/run/snapshot_keeper.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "actors/common/ask.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/run/snapshot_store.hpp"

namespace actorrec::trainer {
namespace {

// A piece is a shard's whole file (gigabytes at full scale): the same
// hour the driver gives a checkpoint's files.
constexpr std::chrono::seconds kPieceWait{3600};

struct KeeperState {
  static inline const char* name = "snapshot_keeper";
  std::unique_ptr<SnapshotStore> store;
};

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
        auto rp = self->make_response_promise<ok_atom>();
        self->request(to, kPieceWait, snap_put_atom::value, k, name, std::move(bytes).value())
            .then([rp](ok_atom) mutable { rp.deliver(ok_atom::value); },
                  [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
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
      [=](snap_get_atom, uint64_t k, const std::string& name) -> caf::result<std::string> {
        auto bytes = self->state.store->Read(k, name);
        if (!bytes.ok()) return Failed(bytes.status());
        return std::move(bytes).value();
      },
  };
}

}  // namespace

std::string KeeperName(const std::string& member) { return "snapshot_keeper@" + member; }

std::string ReplicaHolder(const config::ClusterConfig& cluster, const std::string& member) {
  const auto& m = cluster.members;
  if (m.size() < 2) return "";
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].name == member) return m[(i + 1) % m.size()].name;
  }
  return "";
}

caf::actor SpawnSnapshotKeeper(caf::actor_system& sys, std::string dir) { return sys.spawn(Keeper, std::move(dir)); }

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
  const auto k = static_cast<uint64_t>(latest);
  SnapshotStore store(dir);
  // Who may hold a piece: the replica holder first (it keeps this member's
  // shard files), then the coordinator (it has the dense piece), then the
  // rest in the topology's order.
  std::vector<std::string> holders;
  for (const std::string& h : {ReplicaHolder(cfg.cluster, member), coordinator}) {
    if (!h.empty() && h != member && std::find(holders.begin(), holders.end(), h) == holders.end()) holders.push_back(h);
  }
  for (const config::Member& m : cfg.cluster.members) {
    if (m.name != member && std::find(holders.begin(), holders.end(), m.name) == holders.end()) {
      holders.push_back(m.name);
    }
  }
  for (const std::string& piece : pieces) {
    if (store.Has(k, piece)) continue;
    std::string why;
    bool fetched = false;
    for (const std::string& holder : holders) {
      auto keeper = lookup({KeeperName(holder)});
      if (!keeper.ok()) {
        why += "; " + holder + ": " + keeper.status().message();
        continue;
      }
      std::string bytes;
      Status st = AskAndWait(
          sys, (*keeper)[0], std::chrono::duration_cast<std::chrono::milliseconds>(kPieceWait),
          [&](std::string& b) { bytes = std::move(b); }, snap_get_atom::value, k, piece);
      if (!st.ok()) {
        why += "; " + holder + ": " + st.message();
        continue;
      }
      if (Status a = store.Adopt(k, piece, bytes); !a.ok()) return a;
      spdlog::info("snapshot batch-{}: fetched {} ({} bytes) from member '{}'", k, piece, bytes.size(), holder);
      fetched = true;
      break;
    }
    if (!fetched) {
      return Status::NotFound("no member keeps " + piece + " of snapshot batch-" + std::to_string(k) +
                              " that the run resumes from" + why);
    }
  }
  if (Status st = store.Select(k); !st.ok()) return st;
  return dir;
}

}  // namespace actorrec::trainer
