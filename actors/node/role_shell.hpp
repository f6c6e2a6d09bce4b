// A role actor's registration with the supervisor, and the shell a node
// starts for a role whose actor its process does not run.
//
// A member that runs no training (`actorrec node` until the pipeline spans
// processes, issue 6) starts this shell in each role's place, so that
// membership, monitoring and the inspector see the whole cluster; it does
// no training work. In `actorrec train` the node registers the training
// pipeline's own actors instead (NodeArgs::hosting).
#pragma once

#include <caf/fwd.hpp>

#include <string>

#include "actors/node/actor_plan.hpp"
#include "messages/kinds.hpp"

namespace actorrec {

// The Register message of `planned` on `member`.
wire::Frame<wire::Register> RegisterFrame(const std::string& member, const PlannedActor& planned);

caf::actor SpawnRoleShell(caf::local_actor* parent, const std::string& member, const PlannedActor& planned,
                          const caf::actor& supervisor);

}  // namespace actorrec
