// Registration of every Frame<S> with CAF, from the list in kinds.hpp.
#include "messages/registry.hpp"

#include <cstdint>
#include <vector>

#include "messages/kinds.hpp"

namespace actorrec::wire {

void AddMessageTypes(caf::actor_system_config& cfg) {
#define ACTORREC_WIRE_ADD(S, NAME) cfg.add_message_type<Frame<S>>(NAME);
  ACTORREC_ALL_MESSAGES(ACTORREC_WIRE_ADD)
#undef ACTORREC_WIRE_ADD
  // The pipeline's plain-value messages that cross processes in a cluster:
  // a trainer's settled report (times, counts) and the sync payloads.
  cfg.add_message_type<std::vector<float>>("std::vector<float>");
  cfg.add_message_type<std::vector<double>>("std::vector<double>");
  cfg.add_message_type<std::vector<uint64_t>>("std::vector<uint64_t>");
}

}  // namespace actorrec::wire
