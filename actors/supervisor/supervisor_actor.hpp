// The supervisor: admits members, watches them, and ends the run when one is
// lost. One per cluster, on the coordinator member.
//
// Protocol (every payload is a wire::Frame of messages/control.capnp):
//   Hello            -> Challenge              (any process)
//   Join             -> JoinReply              (the process that said Hello)
//   Register                                   (role actors of joined members)
//   Heartbeat        -> Heartbeat              (node actors, every heartbeat_ms)
//   ready_atom       -> uint32 actors          (answered once the whole cluster registered)
//   (lookup_atom, names) -> std::vector<caf::actor>   (once every name is registered or published)
//   (publish_atom, name, actor)                (a helper that is no role: run driver, rendezvous)
//   (settled_atom, int64 batch)                (the run's driver: the last completed batch, for messages)
//   stop_atom, Stop                            (end the run: tells every node, then quits)
//   (spare_atom, spare) -> std::string member  (a spare's worker: the member it takes over, "" at the end)
// Sends Stop (and PeerDown, when a member was lost) to every joined node.
// A malformed frame is answered with an ErrorReply and changes nothing.
//
// State diagram: waiting (members join) -> ready (all joined and registered)
// -> stopping. A lost member, an overdue member or a stop request moves to
// stopping from any state; the Outcome records why.
#pragma once

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include <memory>

#include "actors/common/exit_codes.hpp"
#include "configs/config.hpp"

namespace actorrec {

// A spare member waiting for roles (IsSpare, actors/node/actor_plan.hpp):
// (spare_atom, std::string spare) is answered with the name of the member
// whose roles it takes over, or with "" when the run finished (an error
// when it ended otherwise: the spare waits again for the cluster's next run).
using spare_atom = caf::atom_constant<caf::atom("arspare")>;

struct SupervisorArgs {
  config::Config config;
  caf::actor inspector;              // receives every Register; may be null
  std::shared_ptr<Outcome> outcome;  // where the run's exit code goes
  // The run after a loss (the coordinator's worker restarted by its agent):
  // only then do spares take over members that do not join within
  // cluster.spare_takeover_ms; at a cluster's first start every member is
  // waited for (join_timeout_ms).
  bool recovering = false;
};

// Spawns the supervisor. The caller keeps the handle (STACK.md pitfall 8).
caf::actor SpawnSupervisor(caf::actor_system& sys, SupervisorArgs args);

}  // namespace actorrec
