// Atoms shared by the actor shells (CAF 0.17 spelling; at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace actorrec {

// Periodic self-message: heartbeats, liveness and join-timeout checks.
using tick_atom = caf::atom_constant<caf::atom("artick")>;
// Asks the supervisor to answer once every member and actor is registered.
using ready_atom = caf::atom_constant<caf::atom("arready")>;
// Asks an actor to end the run (from a signal or the end of local work).
using stop_atom = caf::atom_constant<caf::atom("arstop")>;

}  // namespace actorrec
