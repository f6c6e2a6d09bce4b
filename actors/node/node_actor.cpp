// The node's actor shell: join, spawn, heartbeat, stop.
#include "actors/node/node_actor.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/node/role_shell.hpp"
#include "actors/supervisor/membership.hpp"
#include "base/version.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;

// How long the supervisor may take to answer Hello and Join: these involve
// no work beyond an HMAC, so a silent supervisor is a broken one.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);

struct NodeState {
  static inline const char* name = "node";
  NodeArgs args;
  std::vector<caf::actor> children;
  bool running = false;
  uint64_t heartbeat_seq = 0;
  Clock::time_point last_reply{};
  bool heard_back = false;  // the supervisor answered a heartbeat
};

using Self = caf::stateful_actor<NodeState>*;

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

void Leave(Self self, int exit_code) {
  self->state.args.outcome->Set(exit_code);
  for (auto& child : self->state.children) self->send_exit(child, caf::exit_reason::user_shutdown);
  self->state.children.clear();
  self->quit();
}

std::string Coordinator(Self self) {
  const auto& args = self->state.args;
  return "coordinator '" + args.config.cluster.coordinator + "' " +
         (args.supervisor_endpoint.empty() ? "in this process" : "at " + args.supervisor_endpoint);
}

void Start(Self self) {
  auto& st = self->state;
  const config::Member* me = st.args.config.cluster.Find(st.args.member);
  size_t hosted = 0;
  for (const auto& planned : st.args.pipeline_registers ? std::vector<PlannedActor>{} : ActorsOf(*me)) {
    caf::actor actor = st.args.hosting ? st.args.hosting(planned) : caf::actor{};
    if (actor) {
      self->send(st.args.supervisor, RegisterFrame(st.args.member, planned), actor);
      ++hosted;
    } else {
      st.children.push_back(SpawnRoleShell(self, st.args.member, planned, st.args.supervisor));
    }
  }
  st.running = true;
  st.last_reply = Clock::now();
  self->monitor(st.args.supervisor);
  self->send(self, tick_atom::value);
  if (st.args.pipeline_registers) {
    spdlog::info("joined {}; starting the training pipeline's actors of this member", Coordinator(self));
  } else {
    spdlog::info("joined {}; started {} role shell(s), registered {} actor(s) of this process", Coordinator(self),
                 st.children.size(), hosted);
  }
  if (st.args.on_admitted) st.args.on_admitted();
}

void SendJoin(Self self, const std::string& nonce) {
  auto& st = self->state;
  auto join = wire::Encode<wire::Join>([&](wire::Join::Builder b) {
    b.setMember(wire::AsText(st.args.member));
    b.setProof(wire::AsData(Membership::Proof(st.args.config.cluster.secret, nonce, st.args.member)));
    b.setBuild(BuildVersion());
    b.setConfigDigest(wire::AsText(st.args.config.digest));
    b.setPid(static_cast<uint32_t>(getpid()));
    b.setHostName(wire::AsText(HostName()));
    b.setGemmKernels(wire::AsText(st.args.gemm_kernels));
  });
  self->request(st.args.supervisor, kHandshakeTimeout, join)
      .then(
          [=](const wire::Frame<wire::JoinReply>& frame) {
            auto reply = wire::Open(frame);
            if (!reply.ok()) {
              spdlog::error("unreadable JoinReply from {}: {}", Coordinator(self), reply.status().ToString());
              return Leave(self, kExitFailure);
            }
            if (reply->root().isRefused()) {
              auto refused = reply->root().getRefused();
              // A worker its agent restarted can reach the coordinator of
              // the failed run before it has stopped: exit as for a lost
              // peer, so that the agent has it rejoin the next run.
              if (refused.getReason() == wire::JoinReply::Refused::Reason::RUN_ENDING) {
                spdlog::warn("{} is ending its run: {}; leaving to rejoin the next one", Coordinator(self),
                             wire::Str(refused.getMessage()));
                return Leave(self, kExitPeerLost);
              }
              spdlog::error("refused by {}: {}", Coordinator(self), wire::Str(refused.getMessage()));
              return Leave(self, kExitRefused);
            }
            Start(self);
          },
          [=](const caf::error& e) {
            spdlog::error("Join failed at {}: {}", Coordinator(self), caf::to_string(e));
            Leave(self, kExitFailure);
          });
}

void SendHello(Self self) {
  auto& st = self->state;
  auto hello = wire::Encode<wire::Hello>([&](wire::Hello::Builder b) {
    b.setMember(wire::AsText(st.args.member));
    b.setBuild(BuildVersion());
    b.setConfigDigest(wire::AsText(st.args.config.digest));
  });
  self->request(st.args.supervisor, kHandshakeTimeout, hello)
      .then(
          [=](const wire::Frame<wire::Challenge>& frame) {
            auto challenge = wire::Open(frame);
            if (!challenge.ok()) {
              spdlog::error("unreadable Challenge from {}: {}", Coordinator(self), challenge.status().ToString());
              return Leave(self, kExitFailure);
            }
            SendJoin(self, wire::Bytes(challenge->root().getNonce()));
          },
          [=](const caf::error& e) {
            spdlog::error("no answer to Hello from {}: {}", Coordinator(self), caf::to_string(e));
            Leave(self, kExitFailure);
          });
}

void Heartbeat(Self self) {
  auto& st = self->state;
  if (!st.running) return;
  const auto timeout = std::chrono::milliseconds(st.args.config.cluster.peer_timeout_ms);
  if (Clock::now() - st.last_reply > timeout) {
    spdlog::error("{} lost: no heartbeat reply for more than {} ms", Coordinator(self),
                  st.args.config.cluster.peer_timeout_ms);
    return Leave(self, kExitPeerLost);
  }
  auto hb = wire::Encode<wire::Heartbeat>([&](wire::Heartbeat::Builder b) {
    b.setMember(wire::AsText(st.args.member));
    b.setSeq(++st.heartbeat_seq);
    b.setSentUnixNanos(std::chrono::system_clock::now().time_since_epoch().count());
    b.setActors(static_cast<uint32_t>(st.children.size()));
  });
  self->request(st.args.supervisor, timeout, hb)
      .then(
          [=](const wire::Frame<wire::Heartbeat>& frame) {
            self->state.last_reply = Clock::now();
            if (!self->state.heard_back) {
              self->state.heard_back = true;
              auto reply = wire::Open(frame);
              if (reply.ok()) spdlog::info("first heartbeat answered by '{}'", wire::Str(reply->root().getMember()));
            }
          },
            // A timeout is judged by the silence check above; a lost
            // connection surfaces as the supervisor's down message.
            [=](const caf::error& e) {
              if (e != caf::sec::request_timeout) spdlog::warn("heartbeat refused: {}", caf::to_string(e));
            });
  self->delayed_send(self, std::chrono::milliseconds(st.args.config.cluster.heartbeat_ms), tick_atom::value);
}

caf::behavior Node(Self self, NodeArgs args) {
  self->state.args = std::move(args);
  self->set_default_handler(ReportUnexpected);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.source != self->state.args.supervisor.address()) return;
    spdlog::error("{} lost: {}", Coordinator(self),
                  dm.reason == caf::exit_reason::remote_link_unreachable
                      ? "connection lost (process killed or network down)"
                      : "it stopped (" + caf::to_string(dm.reason) + ")");
    Leave(self, kExitPeerLost);
  });
  SendHello(self);
  return {
      [=](tick_atom) { Heartbeat(self); },
      [=](const wire::Frame<wire::PeerDown>& frame) {
        auto down = wire::Open(frame);
        if (down.ok()) {
          spdlog::warn("member '{}' was lost: {}", wire::Str(down->root().getMember()),
                       wire::Str(down->root().getReason()));
        }
      },
      [=](const wire::Frame<wire::Stop>& frame) {
        auto stop = wire::Open(frame);
        if (!stop.ok()) return;
        const auto reason = stop->root().getReason();
        const std::string why = wire::Str(stop->root().getMessage());
        const bool clean = reason == wire::Stop::Reason::FINISHED || reason == wire::Stop::Reason::INTERRUPTED;
        if (clean) {
          spdlog::info("stopping: {}", why);
        } else {
          spdlog::error("stopping: {}", why);
        }
        Leave(self, clean ? kExitOk : reason == wire::Stop::Reason::PEER_LOST ? kExitPeerLost : kExitFailure);
      },
      [=](stop_atom) {
        spdlog::info("stopping on request");
        Leave(self, kExitOk);
      },
  };
}

}  // namespace

caf::actor SpawnNode(caf::actor_system& sys, NodeArgs args) { return sys.spawn(Node, std::move(args)); }

}  // namespace actorrec
