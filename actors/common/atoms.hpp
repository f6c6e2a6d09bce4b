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

namespace actorrec {

// A consumer grants the batch_sampler `n` more batches: (credit_atom, uint32_t n).
using credit_atom = caf::atom_constant<caf::atom("arcredit")>;
// The sampler's last word: (end_atom, uint64_t batches_sent). Sent after the
// last batch, or with an error string when the source failed.
using end_atom = caf::atom_constant<caf::atom("arend")>;
// Self-message that produces the next batch, one per mailbox turn so that
// credits and stop requests are seen between batches.
using pump_atom = caf::atom_constant<caf::atom("arpump")>;

}  // namespace actorrec
