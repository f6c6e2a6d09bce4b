// The order of a batch's input uploads and compute as a plain schedule
// (gpu/input_schedule.hpp): batch b+1's inputs go up while b computes, each
// compute waits for its own inputs' copy only, and a set is reused only
// after the backward of the batch that read it.
#include <catch2/catch.hpp>

#include "gpu/input_schedule.hpp"

namespace actorrec::gpu {

TEST_CASE("a batch's inputs go up while the previous batch computes, into a set it does not read",
          "[gpu][staging]") {
  InputSchedule s;
  // Batch 0: nothing computes yet; its inputs go up right before it.
  REQUIRE(s.FreeSet(0) == size_t{0});
  s.Staged(0, 0, 1);
  CHECK(s.FreeSet(0) == std::nullopt);  // staged already
  CHECK(s.ComputeWaitsOn(0) == 1);
  // While 0 computes: 1's inputs go up into the other set.
  REQUIRE(s.FreeSet(1) == size_t{1});
  s.Staged(1, 1, 2);
  // 2's must wait: both sets are read or about to be.
  CHECK(s.FreeSet(2) == std::nullopt);
  CHECK(s.taken() == 2);
  // 0's backward returned: its set is free for 2, and 1 still waits for
  // its own copy alone, never for 2's.
  s.Computed(0);
  CHECK(s.SetOf(0) == std::nullopt);
  REQUIRE(s.FreeSet(2) == size_t{0});
  s.Staged(2, 0, 3);
  CHECK(s.ComputeWaitsOn(1) == 2);
  CHECK(s.ComputeWaitsOn(2) == 3);
  s.Computed(1);
  CHECK(s.SetOf(2) == size_t{0});
  CHECK(s.FreeSet(3) == size_t{1});
  // A copy already done adds no wait.
  s.Staged(3, 1, 0);
  CHECK(s.ComputeWaitsOn(3) == 0);
}

TEST_CASE("a batch staged but never computed frees its set when a later batch computes", "[gpu][staging]") {
  InputSchedule s;
  s.Staged(4, *s.FreeSet(4), 7);
  s.Staged(5, *s.FreeSet(5), 8);
  // A run that stopped after 4 and resumed at 6 (5 never computed).
  CHECK(s.FreeSet(6) == std::nullopt);
  s.Computed(6);
  CHECK(s.taken() == 0);
  CHECK(s.FreeSet(6) == size_t{0});
  CHECK(s.FreeSet(-1) == std::nullopt);  // no such batch
}

}  // namespace actorrec::gpu
