// Makes every message kind known to CAF, so it can cross the middleman.
#pragma once

#include <caf/actor_system_config.hpp>

namespace actorrec::wire {

// Call on every actor_system_config before the actor_system is built, in every
// process: a kind registered on one side only fails with unexpected_message.
void AddMessageTypes(caf::actor_system_config& cfg);

}  // namespace actorrec::wire
