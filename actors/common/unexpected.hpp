// What every actor shell does with a message it has no handler for: log it
// with the sender and the content's type, and answer with an error that names
// the receiving actor. CAF's default would print to stdout and drop it.
#pragma once

#include <caf/scheduled_actor.hpp>

namespace actorrec {

// Install with `self->set_default_handler(ReportUnexpected);`.
caf::result<caf::message> ReportUnexpected(caf::scheduled_actor* self, caf::message_view& msg);

}  // namespace actorrec
