// The staging ring's bookkeeping (gpu/staging_ring.hpp): spans in ring
// order, wrap-around, a span larger than the ring refused naming both
// sizes, and memory reused only after the ticket of the copy that reads it.
#include <catch2/catch.hpp>

#include "gpu/staging_ring.hpp"

namespace actorrec::gpu {

TEST_CASE("the staging ring hands out spans in order and wraps at its end", "[gpu][staging]") {
  StagingRing ring(10);
  auto a = ring.Reserve(4);
  REQUIRE(a.ok());
  CHECK(a->offset == 0);
  CHECK(a->wait_for == 0);
  ring.Commit(a->offset, 4, 1);
  auto b = ring.Reserve(4);
  REQUIRE(b.ok());
  CHECK(b->offset == 4);
  CHECK(b->wait_for == 0);  // no overlap with a
  ring.Commit(b->offset, 4, 2);
  CHECK(ring.busy() == 2);
  // 3 more would pass the end (8 + 3 > 10): back to 0, over a's floats.
  auto c = ring.Reserve(3);
  REQUIRE(c.ok());
  CHECK(c->offset == 0);
  CHECK(c->wait_for == 1);  // a's copy must have read them first
  ring.Commit(c->offset, 3, 3);
  CHECK(ring.busy() == 2);  // b and c
  // Exactly the rest of the lap after c, over b.
  auto d = ring.Reserve(7);
  REQUIRE(d.ok());
  CHECK(d->offset == 3);
  CHECK(d->wait_for == 2);
}

TEST_CASE("the staging ring waits for the newest copy among the spans it reuses", "[gpu][staging]") {
  StagingRing ring(8);
  for (uint64_t t = 1; t <= 4; ++t) {
    auto s = ring.Reserve(2);
    REQUIRE(s.ok());
    CHECK(s->offset == (t - 1) * 2);
    ring.Commit(s->offset, 2, t);
  }
  auto whole = ring.Reserve(8);
  REQUIRE(whole.ok());
  CHECK(whole->offset == 0);
  CHECK(whole->wait_for == 4);
  CHECK(ring.busy() == 0);
}

TEST_CASE("the staging ring frees spans whose copy is done or read at once", "[gpu][staging]") {
  StagingRing ring(6);
  auto a = ring.Reserve(3);
  ring.Commit(a->offset, 3, 5);
  auto b = ring.Reserve(3);
  ring.Commit(b->offset, 3, 0);  // read at once (a download): never busy
  CHECK(ring.busy() == 1);
  ring.Done(5);
  CHECK(ring.busy() == 0);
  auto c = ring.Reserve(6);
  REQUIRE(c.ok());
  CHECK(c->wait_for == 0);  // nothing left to wait for
}

TEST_CASE("a staged copy larger than the ring is an error naming both sizes", "[gpu][staging]") {
  StagingRing ring(100);
  auto r = ring.Reserve(101);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kInvalidArgument);
  CHECK(r.status().message().find("101 floats") != std::string::npos);
  CHECK(r.status().message().find("100 floats") != std::string::npos);
  auto full = ring.Reserve(100);  // the capacity itself fits
  CHECK(full.ok());
}

}  // namespace actorrec::gpu
