// Process entry points that host actors: every member of a topology in one
// process (`actorrec train`), or one member of a cluster (`actorrec node`).
// Both block until the run ends and return the process exit code
// (actors/common/exit_codes.hpp). SIGINT, SIGTERM and SIGHUP end the run
// cleanly; a second signal ends it at once.
#pragma once

#include <caf/fwd.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "actors/node/actor_plan.hpp"
#include "base/status.hpp"
#include "configs/config.hpp"
#include "messages/control.capnp.h"

namespace actorrec {

// The control plane of `actorrec train`: the inspector, the supervisor and a
// node per member of `cfg.cluster` in the caller's actor system, with no
// network. The nodes register the caller's own role actors (`hosting`
// returns the actor that plays a planned one; null: a shell stands in), so
// the supervisor monitors and the inspector lists the actors that train.
class InProcessControl {
 public:
  // Starts it, waits until every member joined and every role actor
  // registered (cluster.join_timeout_ms), and prints the actors to `out`.
  // Unavailable when the cluster does not come up in time.
  static Result<std::unique_ptr<InProcessControl>> Start(
      caf::actor_system& sys, const config::Config& cfg, const std::function<caf::actor(const PlannedActor&)>& hosting,
      std::ostream& out);

  InProcessControl(const InProcessControl&) = delete;
  InProcessControl& operator=(const InProcessControl&) = delete;
  // Stop("the run ended") unless stopped.
  ~InProcessControl();

  // Ends the run (Stop finished, `why`) and waits for the supervisor and the
  // nodes to end; call before the hosted actors stop, or the supervisor
  // reports their stopping as a failure. Returns the exit code the control
  // plane settled on. Later calls only return it.
  int Stop(const std::string& why);

 private:
  struct Parts;
  InProcessControl() = default;
  void End(wire::Stop::Reason reason, const std::string& why);

  std::unique_ptr<Parts> parts_;  // null once stopped
  int code_ = 0;
};

// What a member process does once its node is admitted (`actorrec node`).
struct MemberWork {
  // On the coordinator: drives the run on the calling thread and returns its
  // exit code. SIGINT and SIGTERM are blocked when it is called: it installs
  // its handlers and then unblocks them on this thread (as `actorrec train`
  // does), so a signal that came in between is not lost. It calls end_run(code, signal) before its own actors stop, which
  // ends the cluster's control plane (see RunMember); if it does not, that
  // happens after it returns.
  using EndRun = std::function<void(int code, int signal)>;
  std::function<int(caf::actor_system& sys, const caf::actor& supervisor, const EndRun& end_run)> drive;
  // On every other member: starts the member's actors and returns what
  // keeps them, released when the member ends; an error ends the member.
  std::function<Result<std::shared_ptr<void>>(caf::actor_system& sys, const caf::actor& supervisor)> host;
  // The GEMM kernels this process's trainers use (NodeArgs::gemm_kernels).
  std::string gemm_kernels;
  // Restarted by its agent after a loss (SupervisorArgs::recovering).
  bool recovering = false;
};

// Runs `member` of `cfg.cluster`. The coordinator listens on its configured
// address and port; the others connect to it, retrying until
// cluster.join_timeout_ms. Without `work`, the node starts role shells
// (role_shell.hpp) in place of the member's actors. Its actor system is
// left running (see runtime.cpp): end the process after it returns.
int RunMember(const config::Config& cfg, const std::string& member, const MemberWork& work = {});

// Runs spare `spare` of `cfg.cluster` (an agent's worker): connects to the
// coordinator and waits until its supervisor gives it the roles of a member
// lost for good; then calls take_over(member) (which records it for the
// agent) and returns kExitTakeOver, and the agent starts the worker again as
// that member. kExitOk when the run finished without it, kExitPeerLost when
// the run ended otherwise or the coordinator was lost (the agent starts it
// again to wait for the next run). The actor system is left running.
int RunSpare(const config::Config& cfg, const std::string& spare,
             const std::function<Status(const std::string& member)>& take_over);

}  // namespace actorrec
