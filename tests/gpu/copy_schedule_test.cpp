// The order of slot copies and compute as a plain schedule
// (gpu/copy_schedule.hpp): each batch's compute waits for its own rows'
// newest copy only, never for a later batch's prefetch.
#include <catch2/catch.hpp>

#include "gpu/copy_schedule.hpp"

namespace actorrec::gpu {

TEST_CASE("a batch's compute waits for the newest copy of its own rows only", "[gpu][staging]") {
  CopySchedule s;
  s.Staged(5, 1);  // b = 5's rows from two shards
  s.Staged(5, 3);
  s.Staged(6, 2);  // b + 1's prefetch, interleaved on the copy stream
  s.Staged(7, 4);
  CHECK(s.ComputeWaitsOn(5) == 3);
  CHECK(s.ComputeWaitsOn(6) == 2);
  CHECK(s.ComputeWaitsOn(7) == 4);
  CHECK(s.ComputeWaitsOn(8) == 0);  // nothing fetched: nothing to wait for
  s.Computed(5);
  CHECK(s.ComputeWaitsOn(5) == 0);
  CHECK(s.ComputeWaitsOn(6) == 2);
  CHECK(s.pending() == 2);
  s.Staged(6, 0);  // a copy already done adds no wait
  CHECK(s.ComputeWaitsOn(6) == 2);
  s.Computed(7);  // forgets 6 too
  CHECK(s.pending() == 0);
}

}  // namespace actorrec::gpu
