// Asking an actor from outside the actor world (the driver's thread, Gloo's
// rendezvous store) and waiting for the answer.
//
// A plain CAF request is answered, refused or timed out; but a request to an
// actor whose node was lost is never answered (the message left with the
// connection), so it waits all of its timeout: a coordinator asking a member
// that was just killed sat in such a wait while the cluster had already
// stopped. AskAndWait also watches the asked actor and returns as soon as it
// stops, local or remote.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <string>
#include <utility>

#include "base/status.hpp"

namespace actorrec {

// Sends (args...) to `a` and hands its answer to on_answer. Unavailable with
// the reason when an error comes back, when `a` stops (its process lost) or
// when nothing comes within `wait`. The question goes as a plain message,
// whose answer CAF sends back as one, so that one receive waits for the
// answer and for the actor's end; a fresh asker per question sees no late
// answer to an earlier one.
template <class OnAnswer, class... Args>
Status AskAndWait(caf::actor_system& sys, const caf::actor& a, std::chrono::milliseconds wait, OnAnswer on_answer,
                  Args&&... args) {
  if (!a) return Status::Unavailable("no such actor");
  caf::scoped_actor asker{sys};
  asker->monitor(a);
  asker->send(a, std::forward<Args>(args)...);
  std::string failed;
  asker->receive(
      on_answer, [&](caf::error& e) { failed = sys.render(e); },
      [&](const caf::down_msg& down) { failed = "it stopped (" + caf::to_string(down.reason) + ")"; },
      caf::after(wait) >> [&] { failed = "no answer within " + std::to_string(wait.count()) + " ms"; });
  if (!failed.empty()) return Status::Unavailable(failed);
  return Status::Ok();
}

}  // namespace actorrec
