// AskAndWait: the answer, a refusal, the asked actor's end and silence each
// end the wait, and each says which. The actor's end is the case a plain
// request gets wrong: it would wait out its whole timeout.
#include "actors/common/ask.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <thread>

#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"

using namespace actorrec;
using namespace std::chrono_literals;

namespace {

// Answers get_atom with 42 at once; get_atom with a number later, through a
// response promise kept until put_atom; never answers stop_atom.
struct KeeperState {
  static inline const char* name = "keeper";
  std::vector<caf::response_promise> waiting;
};

caf::behavior Keeper(caf::stateful_actor<KeeperState>* self) {
  self->set_default_handler(ReportUnexpected);
  return {
      [](get_atom) { return 42; },
      [=](get_atom, int) {
        self->state.waiting.push_back(self->make_response_promise());
        return self->state.waiting.back();
      },
      [=](put_atom, int value) {
        for (auto& rp : self->state.waiting) rp.deliver(value);
        self->state.waiting.clear();
      },
      [=](stop_atom) { self->state.waiting.push_back(self->make_response_promise()); },
  };
}

}  // namespace

TEST_CASE("AskAndWait returns the answer, at once or through a promise kept later", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto keeper = sys.spawn(Keeper);
  int answer = 0;
  REQUIRE(AskAndWait(sys, keeper, 30s, [&](int v) { answer = v; }, get_atom::value).ok());
  REQUIRE(answer == 42);

  std::thread later([&] {
    std::this_thread::sleep_for(50ms);
    caf::anon_send(keeper, put_atom::value, 7);
  });
  Status st = AskAndWait(sys, keeper, 30s, [&](int v) { answer = v; }, get_atom::value, 0);
  later.join();
  REQUIRE(st.ok());
  REQUIRE(answer == 7);
  caf::anon_send_exit(keeper, caf::exit_reason::user_shutdown);
}

TEST_CASE("AskAndWait names the refusal of a message the actor has no handler for", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto keeper = sys.spawn(Keeper);
  Status st = AskAndWait(sys, keeper, 30s, [](int) {}, tick_atom::value);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("keeper has no handler for"));
  caf::anon_send_exit(keeper, caf::exit_reason::user_shutdown);
}

TEST_CASE("AskAndWait returns as soon as the asked actor stops, not at the end of its wait", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto keeper = sys.spawn(Keeper);
  std::thread killer([&] {
    std::this_thread::sleep_for(50ms);
    caf::anon_send_exit(keeper, caf::exit_reason::kill);
  });
  // The wait is long: a plain request would say "request_timeout" after it.
  Status st = AskAndWait(sys, keeper, 120s, [](int) {}, stop_atom::value);
  killer.join();
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("it stopped (exit_reason(kill))"));
  // An actor already gone is named the same way.
  st = AskAndWait(sys, keeper, 120s, [](int) {}, get_atom::value);
  REQUIRE_THAT(st.message(), Catch::Contains("it stopped"));
}

TEST_CASE("AskAndWait says when nothing came within the wait", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto keeper = sys.spawn(Keeper);
  Status st = AskAndWait(sys, keeper, 100ms, [](int) {}, stop_atom::value);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("no answer within 100 ms"));
  caf::anon_send_exit(keeper, caf::exit_reason::kill);
  REQUIRE_FALSE(AskAndWait(sys, caf::actor{}, 100ms, [](int) {}, get_atom::value).ok());
}
