// The agent's restart policy: which ends of a worker restart it, after what
// wait, and when it gives up.
#include "actors/node/agent.hpp"

#include <catch2/catch.hpp>

using namespace actorrec;
using namespace std::chrono_literals;

TEST_CASE("a worker killed by a signal restarts with doubling backoff until it crashed more than max_restarts",
          "[actors][agent]") {
  RestartPolicy p(3, 100);
  const WorkerEnd killed{true, 9, false};
  auto d1 = p.OnEnd(killed);
  CHECK(d1.restart);
  CHECK(d1.delay == 100ms);
  CHECK_THAT(d1.why, Catch::Contains("killed by signal 9") && Catch::Contains("restart 1 of 3"));
  CHECK(p.OnEnd(killed).delay == 200ms);
  CHECK(p.OnEnd(killed).delay == 400ms);
  auto d4 = p.OnEnd(killed);
  CHECK_FALSE(d4.restart);
  CHECK(d4.exit_code == 128 + 9);
  CHECK_THAT(d4.why, Catch::Contains("more than cluster.max_restarts = 3: giving up"));
}

TEST_CASE("a worker that lost a peer rejoins without counting as a crash; the backoff is capped at 10 s",
          "[actors][agent]") {
  RestartPolicy p(1, 7000);
  for (int i = 0; i < 5; ++i) {
    auto d = p.OnEnd({false, 3, false});
    CHECK(d.restart);
    CHECK(d.delay == 7000ms);
  }
  CHECK(p.crashes() == 0);
  CHECK(p.OnEnd({true, 11, false}).delay == 7000ms);
  CHECK_FALSE(p.OnEnd({true, 11, false}).restart);
  RestartPolicy q(20, 7000);
  q.OnEnd({true, 6, false});
  CHECK(q.OnEnd({true, 6, false}).delay == 10000ms);
}

TEST_CASE("done, errors, refusals, join timeouts and stop signals end the agent with the worker's code",
          "[actors][agent]") {
  RestartPolicy p(5, 10);
  for (int code : {0, 1, 2, 4, 5, 7, 8}) {
    auto d = p.OnEnd({false, code, false});
    CHECK_FALSE(d.restart);
    CHECK(d.exit_code == code);
  }
  auto stopped = p.OnEnd({true, 15, true});
  CHECK_FALSE(stopped.restart);
  CHECK(stopped.exit_code == 128 + 15);
  CHECK_FALSE(p.OnEnd({false, 3, true}).restart);  // a peer lost while stopping: no rejoin
  CHECK(p.crashes() == 0);
}

TEST_CASE("a spare's worker given a member's roles is started again at once, without counting as a crash",
          "[actors][agent]") {
  RestartPolicy p(1, 5000);
  auto d = p.OnEnd({false, kExitTakeOver, false});
  CHECK(d.restart);
  CHECK(d.delay == 0ms);
  CHECK_THAT(d.why, Catch::Contains("given the roles of a member lost for good"));
  CHECK(p.crashes() == 0);
  // After a stop signal it ends the agent like any other end.
  CHECK_FALSE(p.OnEnd({false, kExitTakeOver, true}).restart);
}
