// The inspector: a registry of the cluster's live actors and their latest
// stats, answering InspectorQuery for `actorrec inspect` and for `train`'s
// start-up report. One per cluster, on the coordinator.
//
// Protocol (frames of messages/control.capnp):
//   Register, caf::actor        from the supervisor, for every admitted actor
//   Stats                       from any actor, whenever it has new figures
//   InspectorQuery -> InspectorReply, or ErrorReply
#pragma once

#include <caf/fwd.hpp>

namespace actorrec {

caf::actor SpawnInspector(caf::actor_system& sys);

}  // namespace actorrec
