// The refusal log's rate limit: a burst per window, the rest counted.
#include "base/log_rate_limit.hpp"

#include <catch2/catch.hpp>

namespace actorrec {
namespace {

using namespace std::chrono_literals;

TEST_CASE("the log rate limit lets a burst through per window and counts the rest", "[base][log_rate_limit]") {
  LogRateLimit limit(3, 10s);
  const auto t0 = LogRateLimit::Clock::time_point{} + 100s;
  uint64_t held = 99;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(limit.Allow(t0 + std::chrono::milliseconds(i), &held));
    REQUIRE(held == 0);
  }
  for (int i = 0; i < 5; ++i) REQUIRE_FALSE(limit.Allow(t0 + 1s, &held));
  REQUIRE(limit.Flush(t0 + 5s) == 0);  // the window is still open
  // The next window: the first line carries the count of the five.
  REQUIRE(limit.Allow(t0 + 10s, &held));
  REQUIRE(held == 5);
  for (int i = 0; i < 4; ++i) limit.Allow(t0 + 11s, &held);
  REQUIRE(limit.Flush(t0 + 21s) == 2);
  REQUIRE(limit.Flush(t0 + 40s) == 0);
}

}  // namespace
}  // namespace actorrec
