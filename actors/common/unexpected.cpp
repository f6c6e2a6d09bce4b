// Logging and refusing unknown messages.
#include "actors/common/unexpected.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace actorrec {

caf::result<caf::message> ReportUnexpected(caf::scheduled_actor* self, caf::message_view& msg) {
  // Frames print as their bytes; the start is enough to tell the kind.
  constexpr size_t kShown = 160;
  std::string content = caf::to_string(msg.copy_content_to_message());
  if (content.size() > kShown) content = content.substr(0, kShown) + "...";
  const std::string sender = self->current_sender() ? caf::to_string(self->current_sender()) : "an anonymous sender";
  spdlog::warn("{} ignored an unexpected message from {}: {}", self->name(), sender, content);
  return caf::make_error(caf::sec::unexpected_message, std::string(self->name()) + " has no handler for " + content);
}

}  // namespace actorrec
