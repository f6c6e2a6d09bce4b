// Registration of every Frame<S> with CAF, from the list in kinds.hpp.
#include "messages/registry.hpp"

#include "messages/kinds.hpp"

namespace actorrec::wire {

void AddMessageTypes(caf::actor_system_config& cfg) {
#define ACTORREC_WIRE_ADD(S, NAME) cfg.add_message_type<Frame<S>>(NAME);
  ACTORREC_ALL_MESSAGES(ACTORREC_WIRE_ADD)
#undef ACTORREC_WIRE_ADD
}

}  // namespace actorrec::wire
