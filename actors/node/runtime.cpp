// Actor systems, signals and waiting for the end of a run.
#include "actors/node/runtime.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <optional>
#include <ostream>
#include <thread>
#include <tuple>

#include "actors/common/atoms.hpp"
#include "actors/common/exit_codes.hpp"
#include "actors/inspector/inspector_actor.hpp"
#include "actors/node/agent.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/node/node_actor.hpp"
#include "actors/node/stop_signals.hpp"
#include "actors/node/tls_transport.hpp"
#include "actors/supervisor/supervisor_actor.hpp"
#include "base/version.hpp"
#include "messages/registry.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;

// Set when an actor has terminated, whatever the reason.
std::shared_ptr<std::atomic<bool>> WatchDone(const caf::actor& a) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  a->attach_functor([done] { done->store(true); });
  return done;
}

wire::Frame<wire::Stop> StopFrame(wire::Stop::Reason reason, const std::string& why) {
  return wire::Encode<wire::Stop>([&](wire::Stop::Builder b) {
    b.setReason(reason);
    b.setMessage(wire::AsText(why));
  });
}

// Blocks until every watched actor is done; the first signal calls
// `on_signal`, a second one kills `hard_stop` actors.
void WaitForEnd(const sigset_t& set, const std::vector<std::shared_ptr<std::atomic<bool>>>& done,
                const std::function<void(int)>& on_signal, const std::vector<caf::actor>& hard_stop) {
  int signals = 0;
  for (;;) {
    bool all = true;
    for (const auto& d : done) all = all && d->load();
    if (all) return;
    if (int sig = WaitSignal(set, std::chrono::milliseconds(100))) {
      if (++signals == 1) {
        spdlog::warn("{} received: stopping the run (send it again to stop at once)", strsignal(sig));
        on_signal(sig);
      } else {
        spdlog::warn("{} received again: stopping at once", strsignal(sig));
        for (const auto& a : hard_stop) caf::anon_send_exit(a, caf::exit_reason::kill);
      }
    }
  }
}

caf::actor_system_config MakeSystemConfig() {
  caf::actor_system_config sc;
  wire::AddMessageTypes(sc);
  sc.load<caf::io::middleman>();
  // Automatic connections would open a plain TCP listener on every
  // interface and connect members directly, around the TLS transport
  // (tls_transport.hpp). Off is CAF 0.17's default; it stays off.
  sc.set("middleman.enable-automatic-connections", false);
  return sc;
}

// The registered actors, by member and name (registration order depends on
// thread timing), after the coordinator's own two.
void PrintActors(std::ostream& out, const config::ClusterConfig& cluster, const wire::InspectorReply::Reader& reply) {
  struct Row {
    std::string member, name, role;
  };
  std::vector<Row> rows;
  for (auto a : reply.getActors()) {
    rows.push_back({wire::Str(a.getMember()), wire::Str(a.getName()), RoleActorName(a.getRole())});
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& x, const Row& y) { return std::tie(x.member, x.name) < std::tie(y.member, y.name); });
  rows.insert(rows.begin(), {{cluster.coordinator, "supervisor", "supervisor"},
                             {cluster.coordinator, "inspector", "inspector"}});
  out << "  " << std::left << std::setw(14) << "member" << std::setw(22) << "actor" << "role\n";
  for (const auto& r : rows) out << "  " << std::left << std::setw(14) << r.member << std::setw(22) << r.name << r.role << "\n";
}

// The control plane of a one-process run: inspector, supervisor and a node
// per member, talking directly (no network).
struct ControlPlane {
  std::shared_ptr<Outcome> outcome = std::make_shared<Outcome>();
  caf::actor inspector, supervisor;
  std::vector<caf::actor> nodes;
  std::vector<std::shared_ptr<std::atomic<bool>>> done;  // supervisor and nodes
};

ControlPlane SpawnControlPlane(caf::actor_system& sys, const config::Config& cfg,
                               const std::function<caf::actor(const PlannedActor&)>& hosting) {
  ControlPlane cp;
  cp.inspector = SpawnInspector(sys);
  cp.supervisor = SpawnSupervisor(sys, {cfg, cp.inspector, cp.outcome});
  cp.done.push_back(WatchDone(cp.supervisor));
  for (const auto& m : cfg.cluster.members) {
    if (IsSpare(m)) continue;  // nothing to take over in one process
    NodeArgs node;
    node.config = cfg;
    node.member = m.name;
    node.supervisor = cp.supervisor;
    node.outcome = cp.outcome;
    node.hosting = hosting;
    cp.nodes.push_back(SpawnNode(sys, std::move(node)));
    cp.done.push_back(WatchDone(cp.nodes.back()));
  }
  return cp;
}

// Waits until every member joined and every role actor registered
// (cluster.join_timeout_ms) and two heartbeat rounds passed, then prints the
// actors to `out`. OK, or why the cluster did not come up.
Status AwaitReady(caf::actor_system& sys, const config::Config& cfg, const ControlPlane& cp, Clock::time_point started,
                  std::ostream& out) {
  caf::scoped_actor self{sys};
  const auto join_timeout = std::chrono::milliseconds(cfg.cluster.join_timeout_ms);
  Status status = Status::Ok();
  self->request(cp.supervisor, join_timeout, ready_atom::value)
      .receive(
          [&](uint32_t actors) {
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
            out << "cluster up in " << ms.count() << " ms: " << cfg.cluster.members.size() << " member(s), " << actors
                << " role actors registered with the supervisor\n";
          },
          [&](caf::error& e) { status = Status::Unavailable("the cluster did not come up: " + sys.render(e)); });
  if (!status.ok()) return status;
  // Two heartbeat rounds: every node has been heard and answered.
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * cfg.cluster.heartbeat_ms + 50));
  auto query = wire::Encode<wire::InspectorQuery>([](wire::InspectorQuery::Builder b) { b.setListActors(); });
  self->request(cp.inspector, std::chrono::seconds(5), query)
      .receive(
          [&](const wire::Frame<wire::InspectorReply>& frame) {
            auto reply = wire::Open(frame);
            if (reply.ok()) PrintActors(out, cfg.cluster, reply->root());
          },
          [&](caf::error& e) { spdlog::error("the inspector did not answer: {}", sys.render(e)); });
  return Status::Ok();
}

// Connects to the coordinator's supervisor, retrying until
// cluster.join_timeout_ms. -1 when connected, else the exit code.
int ConnectToCoordinator(TlsTransport& transport, const config::Config& cfg, const sigset_t& signals,
                         caf::actor* supervisor) {
  const config::Member& coordinator = cfg.cluster.Coordinator();
  const std::string endpoint = coordinator.address + ":" + std::to_string(coordinator.port);
  const auto deadline = Clock::now() + std::chrono::milliseconds(cfg.cluster.join_timeout_ms);
  std::string last_error;
  for (;;) {
    auto remote = transport.RemoteActor(coordinator.address, coordinator.port);
    if (remote.ok()) {
      *supervisor = *remote;
      return -1;
    }
    last_error = remote.status().message();
    // Another secret: the coordinator will never accept us.
    if (const std::string mismatch = transport.CertificateMismatch(); !mismatch.empty()) {
      spdlog::error("refused by coordinator '{}' at {}: TLS: {}; the cluster secret does not match; give every "
                    "member the same cluster.secret ({})",
                    coordinator.name, endpoint, mismatch, cfg.path);
      return kExitRefused;
    }
    if (Clock::now() >= deadline) {
      spdlog::error("cannot reach coordinator '{}' at {} within {} ms: {}; is it running, and is its address right "
                    "in {}?",
                    coordinator.name, endpoint, cfg.cluster.join_timeout_ms, last_error, cfg.path);
      return kExitJoinTimeout;
    }
    if (int sig = WaitSignal(signals, std::chrono::milliseconds(200))) {
      spdlog::warn("{} received while connecting; stopping", strsignal(sig));
      return kExitOk;
    }
  }
}

}  // namespace

int RunSpare(const config::Config& cfg, const std::string& spare,
             const std::function<Status(const std::string& member)>& take_over) {
  const sigset_t signals = BlockStopSignals();
  auto sc = MakeSystemConfig();
  // Never destroyed, as in RunMember.
  caf::actor_system& sys = *new caf::actor_system{sc};
  spdlog::info("spare '{}' starting (build {}, config {} digest {})", spare, BuildVersion(), cfg.path, cfg.digest);
  auto tls = TlsTransport::Start(sys, cfg.cluster, spare);
  if (!tls.ok()) {
    spdlog::error("spare '{}' cannot set up TLS: {}", spare, tls.status().message());
    return kExitFailure;
  }
  caf::actor supervisor;
  if (const int code = ConnectToCoordinator(**tls, cfg, signals, &supervisor); code >= 0) return code;
  // Waits for the supervisor's answer, its end (the coordinator lost: the
  // agent starts this worker again for the next run) or a stop signal.
  caf::scoped_actor self{sys};
  self->monitor(supervisor);
  self->send(supervisor, spare_atom::value, spare);
  for (;;) {
    std::optional<int> code;
    self->receive(
        [&](const std::string& member) {
          if (member.empty()) {
            spdlog::info("spare '{}': the run finished without needing it", spare);
            code = kExitOk;
            return;
          }
          const config::Member* m = cfg.cluster.Find(member);
          spdlog::warn("spare '{}' takes over member '{}' (its roles, shards and trainer ranks; its address here)",
                       spare, member);
          if (m == nullptr || IsSpare(*m) || member == cfg.cluster.coordinator) {
            spdlog::error("spare '{}': the coordinator named '{}', which it cannot take over", spare, member);
            code = kExitFailure;
          } else if (Status st = take_over(member); !st.ok()) {
            spdlog::error("spare '{}': {}", spare, st.message());
            code = kExitFailure;
          } else {
            code = kExitTakeOver;
          }
        },
        [&](caf::error& e) {
          spdlog::info("spare '{}': {}; waiting again for the cluster's next run", spare, sys.render(e));
          code = kExitPeerLost;
        },
        [&](const caf::down_msg&) {
          spdlog::info("spare '{}': the coordinator is gone; waiting again for the cluster's next run", spare);
          code = kExitPeerLost;
        },
        caf::after(std::chrono::milliseconds(100)) >> [] {});
    if (code) return *code;
    if (int sig = WaitSignal(signals, std::chrono::milliseconds(1))) {
      spdlog::warn("{} received while waiting as a spare; stopping", strsignal(sig));
      return kExitOk;
    }
  }
}

struct InProcessControl::Parts {
  ControlPlane cp;
};

Result<std::unique_ptr<InProcessControl>> InProcessControl::Start(
    caf::actor_system& sys, const config::Config& cfg, const std::function<caf::actor(const PlannedActor&)>& hosting,
    std::ostream& out) {
  const auto started = Clock::now();
  std::unique_ptr<InProcessControl> control(new InProcessControl());
  control->parts_ = std::make_unique<Parts>(Parts{SpawnControlPlane(sys, cfg, hosting)});
  if (Status s = AwaitReady(sys, cfg, control->parts_->cp, started, out); !s.ok()) {
    control->parts_->cp.outcome->Set(kExitFailure);
    control->End(wire::Stop::Reason::FAILED, s.message());
    return s;
  }
  return control;
}

InProcessControl::~InProcessControl() { Stop("the run ended"); }

int InProcessControl::Stop(const std::string& why) {
  if (parts_) End(wire::Stop::Reason::FINISHED, why);
  return code_;
}

void InProcessControl::End(wire::Stop::Reason reason, const std::string& why) {
  ControlPlane& cp = parts_->cp;
  caf::anon_send(cp.supervisor, stop_atom::value, StopFrame(reason, why));
  // The supervisor tells every node to stop; both end within the
  // supervisor's stop grace, after which what is left is killed.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    bool all = true;
    for (const auto& d : cp.done) all = all && d->load();
    if (all) break;
    if (Clock::now() > deadline) {
      spdlog::warn("the control plane did not stop in 10 s; stopping it at once");
      for (const auto& n : cp.nodes) caf::anon_send_exit(n, caf::exit_reason::kill);
      caf::anon_send_exit(cp.supervisor, caf::exit_reason::kill);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  caf::anon_send_exit(cp.inspector, caf::exit_reason::user_shutdown);
  code_ = cp.outcome->code();
  parts_.reset();
}

int RunMember(const config::Config& cfg, const std::string& member, const MemberWork& work) {
  const sigset_t signals = BlockStopSignals();
  auto outcome = std::make_shared<Outcome>();
  auto sc = MakeSystemConfig();
  // Never destroyed: after a run across processes, a dead peer's connection
  // can keep references to this process's detached actors, and
  // ~actor_system would wait for them forever. The process ends right after
  // (`actorrec node` leaves with std::_Exit once the logs are flushed).
  caf::actor_system& sys = *new caf::actor_system{sc};
  const config::Member& me = *cfg.cluster.Find(member);
  const config::Member& coordinator = cfg.cluster.Coordinator();
  const bool is_coordinator = member == coordinator.name;
  const std::string endpoint = coordinator.address + ":" + std::to_string(coordinator.port);
  spdlog::info("member '{}' starting (build {}, config {} digest {})", member, BuildVersion(), cfg.path, cfg.digest);
  // Every connection of the cluster is mutual TLS with keys from the secret.
  auto tls = TlsTransport::Start(sys, cfg.cluster, member);
  if (!tls.ok()) {
    spdlog::error("member '{}' cannot set up TLS: {}", member, tls.status().message());
    return kExitFailure;
  }
  TlsTransport& transport = **tls;
  spdlog::info("TLS with the cluster's keys (CA {})", transport.CaFingerprint().substr(0, 16));

  caf::actor inspector, supervisor;
  std::vector<std::shared_ptr<std::atomic<bool>>> done;
  uint16_t published = 0;
  if (is_coordinator) {
    inspector = SpawnInspector(sys);
    supervisor = SpawnSupervisor(sys, {cfg, inspector, outcome, work.recovering});
    done.push_back(WatchDone(supervisor));
    auto port = transport.Publish(supervisor, me.port, me.address);
    if (!port.ok()) {
      spdlog::error("cannot listen on {}:{}: {}; is another process using the port? (cluster.member '{}' in {})",
                    me.address, me.port, port.status().message(), member, cfg.path);
      caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
      caf::anon_send_exit(inspector, caf::exit_reason::user_shutdown);
      return kExitFailure;
    }
    published = *port;
    spdlog::info("coordinator listening on {}:{}; waiting for {} member(s)", me.address, published,
                 cfg.cluster.members.size());
  } else if (const int code = ConnectToCoordinator(transport, cfg, signals, &supervisor); code >= 0) {
    return code;
  }

  const bool working = is_coordinator ? static_cast<bool>(work.drive) : static_cast<bool>(work.host);
  auto admitted = std::make_shared<std::promise<void>>();
  std::future<void> admission = admitted->get_future();
  NodeArgs node_args;
  node_args.config = cfg;
  node_args.member = member;
  node_args.supervisor = supervisor;
  node_args.supervisor_endpoint = is_coordinator ? "" : endpoint;
  node_args.outcome = outcome;
  node_args.gemm_kernels = work.gemm_kernels;
  if (working) {
    node_args.pipeline_registers = true;
    node_args.on_admitted = [admitted] { admitted->set_value(); };
  }
  auto node = SpawnNode(sys, std::move(node_args));
  done.push_back(WatchDone(node));
  auto stop_member = [&](const std::string& why) {
    if (is_coordinator) {
      caf::anon_send(supervisor, stop_atom::value, StopFrame(wire::Stop::Reason::INTERRUPTED, why));
    } else {
      caf::anon_send(node, stop_atom::value);
    }
  };
  int drive_code = kExitOk;
  std::shared_ptr<void> hosted;
  if (working) {
    // Until the node is admitted (it may also give up, or a signal come).
    bool in = false;
    while (!in && !done.back()->load()) {
      in = admission.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
      if (int sig = in ? 0 : WaitSignal(signals, std::chrono::milliseconds(1))) {
        spdlog::warn("{} received while joining; stopping", strsignal(sig));
        stop_member(std::string("signal ") + strsignal(sig));
        break;
      }
    }
    if (in && is_coordinator) {
      bool ended = false;
      auto end_run = [&](int code, int sig) {
        if (ended) return;
        ended = true;
        if (sig != 0) {
          caf::anon_send(supervisor, stop_atom::value,
                         StopFrame(wire::Stop::Reason::INTERRUPTED,
                                   std::string("signal ") + strsignal(sig) + " on the coordinator"));
        } else if (code == kExitOk) {
          caf::anon_send(supervisor, stop_atom::value, StopFrame(wire::Stop::Reason::FINISHED, "training finished"));
        } else {
          // A failed run may be a lost member: give the supervisor the time
          // it takes to notice, so that the member is named and the exit
          // code says so.
          const auto deadline = Clock::now() + std::chrono::milliseconds(cfg.cluster.peer_timeout_ms + 1000);
          while (!done.front()->load() && Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          caf::anon_send(supervisor, stop_atom::value,
                         StopFrame(wire::Stop::Reason::FAILED, "training failed on the coordinator (exit code " +
                                                                   std::to_string(code) + "); see its log"));
        }
      };
      // The drive unblocks SIGINT/SIGTERM once its handlers are in place
      // (a signal pending since the admission is delivered to them then).
      drive_code = work.drive(sys, supervisor, end_run);
      pthread_sigmask(SIG_BLOCK, &signals, nullptr);
      end_run(drive_code, 0);
    } else if (in) {
      auto started = work.host(sys, supervisor);
      if (started.ok()) {
        hosted = std::move(started).value();
      } else {
        spdlog::error("member '{}' could not start its actors: {}", member, started.status().message());
        outcome->Set(ExitCodeOf(started.status()));
        caf::anon_send(node, stop_atom::value);
      }
    }
  }
  WaitForEnd(
      signals, done,
      [&](int sig) {
        stop_member(std::string("signal ") + strsignal(sig) + (is_coordinator ? " on the coordinator" : ""));
      },
      is_coordinator ? std::vector<caf::actor>{node, supervisor} : std::vector<caf::actor>{node});
  hosted.reset();  // the member's actors stop
  if (is_coordinator) {
    caf::anon_send_exit(inspector, caf::exit_reason::user_shutdown);
    transport.Unpublish(supervisor, published);
  }
  const int code = outcome->code() != kExitOk ? outcome->code() : drive_code;
  // With an agent (cluster.max_restarts > 0) the run goes on after the
  // loss: metrics.jsonl records it, before the restarted run's "recovery".
  // The attempt's other events (a spare's takeover, which happens while a
  // restarted run waits for its members) end that attempt's lines: the
  // training driver writes the file while the run lasts.
  if (is_coordinator && cfg.cluster.max_restarts > 0) {
    std::vector<std::string> lines = outcome->events();
    if (!outcome->loss().empty()) lines.push_back(outcome->loss());
    if (!lines.empty()) {
      std::ofstream metrics(cfg.training.metrics_file, std::ios::app);
      for (const std::string& line : lines) metrics << line << "\n";
    }
  }
  spdlog::info("member '{}' exits with code {}", member, code);
  return code;
}

}  // namespace actorrec
