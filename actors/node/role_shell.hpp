// The part every role actor shares: it registers with the supervisor under
// its planned name and ends with its node.
//
// Until a role's own actor lands (sampler and data: issue 3, oracle: 4,
// shards, caches, trainers, sync: 5), the node runs this shell alone in its
// place, so that membership, monitoring and the inspector see the whole
// cluster. It does no training work.
#pragma once

#include <caf/fwd.hpp>

#include <string>

#include "actors/node/actor_plan.hpp"

namespace actorrec {

caf::actor SpawnRoleShell(caf::local_actor* parent, const std::string& member, const PlannedActor& planned,
                          const caf::actor& supervisor);

}  // namespace actorrec
