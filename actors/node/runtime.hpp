// Process entry points that host actors: every member of a topology in one
// process (`actorrec train`), or one member of a cluster (`actorrec node`).
// Both block until the run ends and return the process exit code
// (actors/common/exit_codes.hpp). SIGINT, SIGTERM and SIGHUP end the run
// cleanly; a second signal ends it at once.
#pragma once

#include <iosfwd>
#include <string>

#include "configs/config.hpp"

namespace actorrec {

// Starts every member of `cfg.cluster` in this process with no network,
// waits until all of their actors have registered and exchanged heartbeats,
// prints the actors that ran to `out`, and stops them.
int RunInProcess(const config::Config& cfg, std::ostream& out);

// Runs `member` of `cfg.cluster`. The coordinator listens on its configured
// address and port; the others connect to it, retrying until
// cluster.join_timeout_ms.
int RunMember(const config::Config& cfg, const std::string& member);

}  // namespace actorrec
