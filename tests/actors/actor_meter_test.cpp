// Metered<Base>: an actor's mailbox depth and handled count, as the
// inspector reads them from another thread while the actor works.
#include "actors/common/actor_meter.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "actors/common/atoms.hpp"

using namespace actorrec;
using namespace std::chrono_literals;

namespace {

struct GateState {
  static inline const char* name = "gate";
};

// Holds its thread on message 0 until `open` is ready.
caf::behavior Gate(Metered<caf::stateful_actor<GateState>>*, std::shared_future<void> open) {
  return {[=](get_atom, int i) {
    if (i == 0) open.wait();
  }};
}

caf::behavior Plain(caf::event_based_actor*) {
  return {[](get_atom, int) {}};
}

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

}  // namespace

TEST_CASE("a metered actor counts what reaches its mailbox and what it handled", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::promise<void> release;
  std::shared_future<void> open = release.get_future().share();
  caf::actor gate = sys.spawn<caf::detached>(Gate, open);
  std::shared_ptr<const ActorMeter> meter = MeterOf(gate);
  REQUIRE(meter != nullptr);
  REQUIRE(MeterOf(sys.spawn(Plain)) == nullptr);  // not metered
  for (int i = 0; i < 6; ++i) caf::anon_send(gate, get_atom::value, i);
  // Message 0 is being handled (held), five wait behind it.
  REQUIRE(meter->enqueued.load() == 6);
  REQUIRE(meter->Depth() == 6);
  REQUIRE(meter->handled.load() == 0);
  release.set_value();
  REQUIRE(WaitFor([&] { return meter->handled.load() == 6; }));
  REQUIRE(meter->Depth() == 0);
  caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  // The counters outlive the actor.
  gate = nullptr;
  REQUIRE(meter->enqueued.load() >= 6);
}
