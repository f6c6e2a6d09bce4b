// The supervisor's actor shell: turns control frames into Membership calls
// and membership verdicts into log lines, replies and the end of the run.
#include "actors/supervisor/supervisor_actor.hpp"

#include <caf/all.hpp>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/supervisor/membership.hpp"
#include "base/hmac.hpp"
#include "base/json_number.hpp"
#include "base/version.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

using Clock = Membership::Clock;

// After Stop is sent, how long the supervisor waits for the nodes to leave
// before quitting anyway. Quitting at once could close the connections
// before the Stop frames are written, and the nodes would report a lost
// coordinator instead of a stop.
constexpr auto kStopGrace = std::chrono::milliseconds(1500);

struct SupervisorState {
  static inline const char* name = "supervisor";

  config::Config cfg;
  std::unique_ptr<Membership> membership;
  caf::actor inspector;
  std::shared_ptr<Outcome> outcome;

  std::map<std::string, caf::actor> nodes;            // member -> its node actor
  std::map<caf::actor_addr, std::string> node_member;  // node actor -> member
  struct Registered {
    std::string member;
    std::string name;
  };
  std::map<caf::actor_addr, Registered> actors;
  size_t expected_actors = 0;
  std::vector<caf::response_promise> ready_waiters;
  // Every registered role actor and published helper, by name: how the
  // processes of a cluster find each other's actors (lookup_atom).
  std::map<std::string, caf::actor> directory;
  struct Lookup {
    std::vector<std::string> names;
    caf::response_promise promise;
  };
  std::vector<Lookup> lookups;  // waiting for names not yet in the directory

  // Spares waiting for the roles of a member lost for good.
  struct Spare {
    std::string name;
    caf::actor_addr who;
    caf::response_promise promise;
  };
  std::vector<Spare> spares;
  bool recovering = false;  // SupervisorArgs::recovering

  bool ready = false;
  bool stopping = false;
  Clock::time_point stop_deadline{};
  uint64_t heartbeat_seq = 0;
  int64_t last_batch = -1;  // the last batch the run's driver reported complete
};

using Self = caf::stateful_actor<SupervisorState>*;

// A member's roles, "trainer+embedding".
std::string RolesText(const config::Member& m) {
  std::vector<std::string> roles;
  for (auto r : m.roles) roles.emplace_back(config::RoleName(r));
  return fmt::format("{}", fmt::join(roles, "+"));
}

std::string Describe(const config::ClusterConfig& cluster, const std::string& member) {
  const config::Member* m = cluster.Find(member);
  if (m == nullptr) return fmt::format("'{}'", member);
  return fmt::format("'{}' ({}:{}, {})", member, m->address, m->port, RolesText(*m));
}

// A request that cannot be read is answered with an error naming the kind;
// nothing else changes.
caf::error Reject(const Status& status) { return caf::make_error(caf::sec::invalid_argument, status.ToString()); }

std::string BatchText(int64_t b) { return b < 0 ? "none" : std::to_string(b); }

// Sends Stop to every node still connected and moves to stopping.
void EndRun(Self self, wire::Stop::Reason reason, const std::string& why, int exit_code) {
  auto& st = self->state;
  if (st.stopping) return;
  st.stopping = true;
  st.outcome->Set(exit_code);
  st.stop_deadline = Clock::now() + kStopGrace;
  auto stop = wire::Encode<wire::Stop>([&](wire::Stop::Builder b) {
    b.setReason(reason);
    b.setMessage(wire::AsText(why));
  });
  for (auto& [member, node] : st.nodes) self->send(node, stop);
  for (auto& rp : st.ready_waiters) {
    rp.deliver(caf::make_error(caf::sec::runtime_error, "the run ended before the cluster was ready: " + why));
  }
  st.ready_waiters.clear();
  for (auto& lookup : st.lookups) {
    lookup.promise.deliver(caf::make_error(caf::sec::runtime_error, "the run ended: " + why));
  }
  st.lookups.clear();
  // A waiting spare ends with a finished run, and waits again for the next
  // run of a cluster that recovers.
  const bool over = reason == wire::Stop::Reason::FINISHED || reason == wire::Stop::Reason::INTERRUPTED;
  for (auto& spare : st.spares) {
    if (over) {
      spare.promise.deliver(std::string());
    } else {
      spare.promise.deliver(caf::make_error(caf::sec::runtime_error, "the run ended: " + why));
    }
  }
  st.spares.clear();
  if (st.nodes.empty()) self->quit();
}

// Answers every lookup whose names are all in the directory now.
void ServeLookups(Self self) {
  auto& st = self->state;
  auto waiting = st.lookups.begin();
  for (auto& lookup : st.lookups) {
    std::vector<caf::actor> found;
    for (const auto& name : lookup.names) {
      auto it = st.directory.find(name);
      if (it == st.directory.end()) break;
      found.push_back(it->second);
    }
    if (found.size() == lookup.names.size()) {
      lookup.promise.deliver(std::move(found));
    } else {
      if (&*waiting != &lookup) *waiting = std::move(lookup);
      ++waiting;
    }
  }
  st.lookups.erase(waiting, st.lookups.end());
}

void CheckReady(Self self) {
  auto& st = self->state;
  if (st.ready || st.stopping) return;
  if (!st.membership->AllJoined() || st.actors.size() < st.expected_actors) return;
  st.ready = true;
  spdlog::info("cluster ready: {} member(s), {} actors registered", st.nodes.size(), st.actors.size());
  for (auto& rp : st.ready_waiters) rp.deliver(static_cast<uint32_t>(st.actors.size()));
  st.ready_waiters.clear();
}

// Wall-clock milliseconds since the epoch, as metrics.jsonl's events give
// their time.
std::string UnixMillisText() {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

void LoseMember(Self self, const std::string& member, const std::string& reason) {
  auto& st = self->state;
  if (!st.membership->MarkLost(member, reason)) return;
  const std::string what = "member " + Describe(st.cfg.cluster, member) + " lost: " + reason +
                           "; last completed batch: " + BatchText(st.last_batch);
  if (auto it = st.nodes.find(member); it != st.nodes.end()) {
    st.node_member.erase(it->second.address());
    st.nodes.erase(it);
  }
  if (st.stopping) {
    spdlog::debug("member '{}' left", member);
    if (st.nodes.empty()) self->quit();
    return;
  }
  spdlog::error("{}", what);
  {
    std::string json = "{\"event\":\"failure\",\"member\":";
    AppendJsonString(&json, member);
    const config::Member* m = st.cfg.cluster.Find(member);
    json += ",\"roles\":";
    AppendJsonString(&json, m == nullptr ? std::string() : RolesText(*m));
    json += ",\"last_batch\":" + std::to_string(st.last_batch) + ",\"cause\":";
    AppendJsonString(&json, reason);
    json += ",\"unix_ms\":" + UnixMillisText() + "}";
    st.outcome->SetLoss(json);
  }
  auto down = wire::Encode<wire::PeerDown>([&](wire::PeerDown::Builder b) {
    b.setMember(wire::AsText(member));
    b.setReason(wire::AsText(reason));
    b.setLastBatch(st.last_batch);
  });
  for (auto& [m, node] : st.nodes) self->send(node, down);
  EndRun(self, wire::Stop::Reason::PEER_LOST, what, kExitPeerLost);
}

caf::result<caf::message> Challenge(Self self, const wire::Frame<wire::Hello>& frame) {
  auto hello = wire::Open(frame);
  if (!hello.ok()) return Reject(hello.status());
  const std::string member = wire::Str(hello->root().getMember());
  const std::string nonce = self->state.membership->Challenge(member, RandomBytes(16));
  spdlog::debug("hello from '{}' (build {}), challenge issued", member, wire::Str(hello->root().getBuild()));
  return caf::make_message(wire::Encode<wire::Challenge>(
      [&](wire::Challenge::Builder b) { b.setNonce(wire::AsData(nonce)); }));
}

wire::JoinReply::Refused::Reason WireReason(Membership::Refusal r) {
  using R = wire::JoinReply::Refused::Reason;
  switch (r) {
    case Membership::Refusal::kWrongSecret: return R::WRONG_SECRET;
    case Membership::Refusal::kUnknownMember: return R::UNKNOWN_MEMBER;
    case Membership::Refusal::kDuplicateMember: return R::DUPLICATE_MEMBER;
    case Membership::Refusal::kConfigMismatch: return R::CONFIG_MISMATCH;
    case Membership::Refusal::kBuildMismatch: return R::BUILD_MISMATCH;
    case Membership::Refusal::kNoChallenge: return R::NO_CHALLENGE;
    case Membership::Refusal::kRunEnding: return R::RUN_ENDING;
  }
  return R::NO_CHALLENGE;
}

caf::result<caf::message> Admit(Self self, const wire::Frame<wire::Join>& frame) {
  auto& st = self->state;
  auto join = wire::Open(frame);
  if (!join.ok()) return Reject(join.status());
  auto r = join->root();
  Membership::JoinRequest req{wire::Str(r.getMember()), wire::Bytes(r.getProof()), wire::Str(r.getBuild()),
                              wire::Str(r.getConfigDigest()), r.getPid(), wire::Str(r.getHostName()),
                              wire::Str(r.getGemmKernels())};
  auto verdict = st.stopping ? Membership::Verdict{Membership::Refusal::kRunEnding, "the run is ending"}
                             : st.membership->Join(req, Clock::now());
  if (!verdict.admitted()) {
    spdlog::warn("refused '{}' (pid {} on {}): {}: {}", req.member, req.pid, req.host_name,
                 RefusalName(*verdict.refusal), verdict.message);
    return caf::make_message(wire::Encode<wire::JoinReply>([&](wire::JoinReply::Builder b) {
      auto refused = b.initRefused();
      refused.setReason(WireReason(*verdict.refusal));
      refused.setMessage(wire::AsText(verdict.message));
    }));
  }
  auto node = caf::actor_cast<caf::actor>(self->current_sender());
  st.nodes[req.member] = node;
  st.node_member[node.address()] = req.member;
  self->monitor(node);
  spdlog::info("member {} joined (pid {} on {})", Describe(st.cfg.cluster, req.member), req.pid, req.host_name);
  if (!verdict.warning.empty()) spdlog::warn("{}", verdict.warning);
  return caf::make_message(wire::Encode<wire::JoinReply>([&](wire::JoinReply::Builder b) {
    auto admitted = b.initAdmitted();
    admitted.setCoordinator(wire::AsText(st.cfg.cluster.coordinator));
    admitted.setMembers(static_cast<uint32_t>(st.cfg.cluster.members.size()));
  }));
}

// `who` is the registering actor: the sender, or an actor its node started
// and registers (actors/node/node_actor.hpp, NodeArgs::hosting).
void Register(Self self, const wire::Frame<wire::Register>& frame, const caf::actor& who) {
  auto& st = self->state;
  auto reg = wire::Open(frame);
  if (!reg.ok()) {
    spdlog::warn("ignored a Register: {}", reg.status().ToString());
    return;
  }
  const std::string member = wire::Str(reg->root().getMember());
  const std::string name = wire::Str(reg->root().getName());
  const auto* status = st.membership->Find(member);
  if (status == nullptr || status->state != Membership::State::kJoined) {
    spdlog::warn("ignored Register of '{}' from member '{}', which has not joined", name, member);
    return;
  }
  if (!who) {
    spdlog::warn("ignored Register of '{}' from member '{}' without an actor", name, member);
    return;
  }
  st.actors[who.address()] = {member, name};
  st.directory[name] = who;
  ServeLookups(self);
  self->monitor(who);
  if (st.inspector) self->send(st.inspector, frame, who);
  spdlog::debug("registered {} on '{}'", name, member);
  CheckReady(self);
}

caf::result<caf::message> AnswerHeartbeat(Self self, const wire::Frame<wire::Heartbeat>& frame) {
  auto& st = self->state;
  auto hb = wire::Open(frame);
  if (!hb.ok()) return Reject(hb.status());
  const std::string member = wire::Str(hb->root().getMember());
  auto node = st.nodes.find(member);
  if (node == st.nodes.end() || node->second.address() != caf::actor_cast<caf::actor_addr>(self->current_sender()) ||
      !st.membership->Heartbeat(member, hb->root().getSeq(), Clock::now())) {
    return caf::make_error(caf::sec::invalid_argument, "heartbeat from '" + member + "', which is not a joined member");
  }
  if (st.membership->Find(member)->heartbeats == 1) spdlog::info("first heartbeat from member '{}'", member);
  return caf::make_message(wire::Encode<wire::Heartbeat>([&](wire::Heartbeat::Builder b) {
    b.setMember(wire::AsText(st.cfg.cluster.coordinator));
    b.setSeq(++st.heartbeat_seq);
    b.setSentUnixNanos(std::chrono::system_clock::now().time_since_epoch().count());
    b.setActors(static_cast<uint32_t>(st.actors.size()));
  }));
}

// A waiting spare takes over the roles of a member lost for good: the
// spare's worker restarts as that member (its agent, actors/node/agent.hpp)
// and joins under its name.
void GiveToSpares(Self self, Clock::time_point now) {
  auto& st = self->state;
  while (st.recovering && !st.spares.empty()) {
    const auto member = st.membership->AwaitingSpare(now);
    if (!member) return;
    SupervisorState::Spare spare = std::move(st.spares.front());
    st.spares.erase(st.spares.begin());
    st.membership->AssignSpare(*member, spare.name);
    const config::Member* s = st.cfg.cluster.Find(spare.name);
    spdlog::warn("member {} did not rejoin within {} ms (half of cluster.join_timeout_ms): spare '{}' ({}) takes "
                 "over its roles",
                 Describe(st.cfg.cluster, *member), st.cfg.cluster.join_timeout_ms / 2, spare.name,
                 s == nullptr ? std::string("?") : s->address);
    std::string json = "{\"event\":\"takeover\",\"member\":";
    AppendJsonString(&json, *member);
    json += ",\"spare\":";
    AppendJsonString(&json, spare.name);
    json += ",\"spare_address\":";
    AppendJsonString(&json, s == nullptr ? std::string() : s->address);
    json += ",\"waited_ms\":" + std::to_string(st.cfg.cluster.join_timeout_ms / 2) +
            ",\"unix_ms\":" + UnixMillisText() + "}";
    st.outcome->AddEvent(json);
    spare.promise.deliver(*member);
  }
}

void Tick(Self self) {
  auto& st = self->state;
  const auto now = Clock::now();
  if (!st.stopping) GiveToSpares(self, now);
  if (st.stopping) {
    if (now >= st.stop_deadline) {
      if (!st.nodes.empty()) spdlog::warn("{} node(s) did not confirm the stop; quitting anyway", st.nodes.size());
      self->quit();
    }
  } else {
    for (const auto& member : st.membership->Silent(now)) {
      LoseMember(self, member, "no heartbeat for more than " + std::to_string(st.cfg.cluster.peer_timeout_ms) + " ms");
    }
    auto overdue = st.membership->Overdue(now);
    if (!overdue.empty() && !st.stopping) {
      std::string names;
      for (const auto& m : overdue) {
        spdlog::error("member {} did not join within {} ms; start `actorrec node --config {} --member {}` on its host",
                      Describe(st.cfg.cluster, m), st.cfg.cluster.join_timeout_ms, st.cfg.path, m);
        names += (names.empty() ? "" : ", ") + m;
      }
      EndRun(self, wire::Stop::Reason::FAILED, "members did not join in time: " + names, kExitJoinTimeout);
    }
  }
  self->delayed_send(self, std::chrono::milliseconds(st.cfg.cluster.heartbeat_ms), tick_atom::value);
}

void OnDown(Self self, const caf::down_msg& dm) {
  auto& st = self->state;
  const auto spare = std::find_if(st.spares.begin(), st.spares.end(),
                                  [&](const SupervisorState::Spare& s) { return s.who == dm.source; });
  if (spare != st.spares.end()) {
    spdlog::info("spare '{}' stopped waiting", spare->name);
    st.spares.erase(spare);
    return;
  }
  const std::string reason = dm.reason ? caf::to_string(dm.reason) : "exited";
  if (auto it = st.node_member.find(dm.source); it != st.node_member.end()) {
    const std::string member = it->second;
    LoseMember(self, member, dm.reason == caf::exit_reason::remote_link_unreachable
                                 ? "connection lost (process killed or network down)"
                                 : "its node stopped (" + reason + ")");
    return;
  }
  if (auto it = st.actors.find(dm.source); it != st.actors.end()) {
    auto info = it->second;
    st.actors.erase(it);
    st.directory.erase(info.name);
    if (st.stopping) return;
    // Losing a role actor while its node lives is a failure of that role;
    // recovery is a later issue, so the run ends with its name.
    const std::string what = "actor " + info.name + " on member '" + info.member + "' stopped: " + reason;
    spdlog::error("{}", what);
    EndRun(self, wire::Stop::Reason::FAILED, what, kExitFailure);
  }
}

caf::behavior Supervisor(Self self, SupervisorArgs args) {
  auto& st = self->state;
  st.cfg = std::move(args.config);
  st.inspector = std::move(args.inspector);
  st.outcome = std::move(args.outcome);
  st.recovering = args.recovering;
  st.membership = std::make_unique<Membership>(st.cfg.cluster, BuildVersion(), st.cfg.digest, Clock::now());
  st.expected_actors = ActorsOf(st.cfg.cluster).size();
  self->set_default_handler(ReportUnexpected);
  self->set_down_handler([=](caf::down_msg& dm) { OnDown(self, dm); });
  self->send(self, tick_atom::value);
  return {
      [=](const wire::Frame<wire::Hello>& f) { return Challenge(self, f); },
      [=](const wire::Frame<wire::Join>& f) { return Admit(self, f); },
      [=](const wire::Frame<wire::Register>& f) {
        Register(self, f, caf::actor_cast<caf::actor>(self->current_sender()));
      },
      [=](const wire::Frame<wire::Register>& f, const caf::actor& who) { Register(self, f, who); },
      [=](const wire::Frame<wire::Heartbeat>& f) { return AnswerHeartbeat(self, f); },
      [=](tick_atom) { Tick(self); },
      [=](ready_atom) {
        auto rp = self->make_response_promise();
        if (self->state.ready) {
          rp.deliver(static_cast<uint32_t>(self->state.actors.size()));
        } else {
          self->state.ready_waiters.push_back(rp);
        }
        return rp;
      },
      [=](lookup_atom, std::vector<std::string>& names) {
        auto rp = self->make_response_promise();
        if (self->state.stopping) {
          rp.deliver(caf::make_error(caf::sec::runtime_error, "the run is stopping"));
          return rp;
        }
        self->state.lookups.push_back({std::move(names), rp});
        ServeLookups(self);
        return rp;
      },
      [=](spare_atom, const std::string& name) {
        // Before the promise, which takes the sender from the message.
        const auto who = caf::actor_cast<caf::actor>(self->current_sender());
        auto rp = self->make_response_promise();
        auto& st = self->state;
        const config::Member* m = st.cfg.cluster.Find(name);
        if (m == nullptr || !IsSpare(*m)) {
          rp.deliver(caf::make_error(caf::sec::invalid_argument, "'" + name + "' is not a spare of this topology"));
          return rp;
        }
        if (st.stopping) {
          rp.deliver(caf::make_error(caf::sec::runtime_error, "the run is stopping"));
          return rp;
        }
        if (who) self->monitor(who);
        st.spares.push_back({name, who ? who.address() : caf::actor_addr{}, rp});
        spdlog::info("spare '{}' is waiting to take over a member lost for good", name);
        GiveToSpares(self, Clock::now());
        return rp;
      },
      [=](settled_atom, int64_t batch) { self->state.last_batch = std::max(self->state.last_batch, batch); },
      [=](publish_atom, const std::string& name, const caf::actor& who) {
        if (!who) return;
        self->state.directory[name] = who;
        ServeLookups(self);
      },
      [=](stop_atom, const wire::Frame<wire::Stop>& f) {
        auto stop = wire::Open(f);
        if (!stop.ok()) return;
        EndRun(self, stop->root().getReason(), wire::Str(stop->root().getMessage()),
               stop->root().getReason() == wire::Stop::Reason::FINISHED ||
                       stop->root().getReason() == wire::Stop::Reason::INTERRUPTED
                   ? kExitOk
                   : kExitFailure);
      },
  };
}

}  // namespace

caf::actor SpawnSupervisor(caf::actor_system& sys, SupervisorArgs args) {
  return sys.spawn(Supervisor, std::move(args));
}

}  // namespace actorrec
