// The shard's barrier bookkeeping: batch b is complete only when every
// writer's round of every batch <= b is in, and broken protocol is named.
#include <catch2/catch.hpp>

#include <random>

#include "actors/embedding/write_back_ledger.hpp"

namespace actorrec::embedding {

TEST_CASE("complete_through waits for the slowest writer", "[embedding]") {
  WriteBackLedger ledger(3);
  CHECK(ledger.complete_through() == -1);
  CHECK(ledger.Allows(-1));
  CHECK_FALSE(ledger.Allows(0));
  REQUIRE(ledger.Record(0, 0).ok());
  REQUIRE(ledger.Record(0, 1).ok());
  REQUIRE(ledger.Record(2, 0).ok());
  CHECK(ledger.complete_through() == -1);
  REQUIRE(ledger.Record(1, 0).ok());
  CHECK(ledger.complete_through() == 0);
  CHECK(ledger.Allows(0));
  CHECK_FALSE(ledger.Allows(1));
}

TEST_CASE("any interleaving of in-order rounds gives the minimum", "[embedding]") {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(seed);
    const uint32_t writers = 1 + rng() % 5;
    WriteBackLedger ledger(writers, 10);
    std::vector<int64_t> next(writers, 10);
    for (int step = 0; step < 200; ++step) {
      const uint32_t w = rng() % writers;
      REQUIRE(ledger.Record(w, next[w]++).ok());
      CHECK(ledger.complete_through() == *std::min_element(next.begin(), next.end()) - 1);
    }
  }
}

TEST_CASE("a repeated, skipped or foreign round is refused, naming it", "[embedding]") {
  WriteBackLedger ledger(2);
  REQUIRE(ledger.Record(1, 0).ok());
  Status repeated = ledger.Record(1, 0);
  CHECK_FALSE(repeated.ok());
  CHECK_THAT(repeated.message(), Catch::Contains("trainer 1") && Catch::Contains("owes batch 1"));
  CHECK_FALSE(ledger.Record(0, 1).ok());  // skips batch 0
  Status foreign = ledger.Record(2, 0);
  CHECK_THAT(foreign.message(), Catch::Contains("trainer 2") && Catch::Contains("2 trainers"));
  CHECK(ledger.complete_through() == -1);
}

}  // namespace actorrec::embedding
