// Snapshot pieces in chunks (actors/run/piece_chunks.hpp) and between two
// keepers (snapshot_keeper.hpp) with a small chunk size
// (ACTORREC_SNAPSHOT_CHUNK_BYTES): a piece arrives whole in several chunks;
// a damaged, missing or extra chunk is refused naming the piece.
#include "actors/run/piece_chunks.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>
#include <string>

#include "actors/common/ask.hpp"
#include "actors/common/atoms.hpp"
#include "actors/run/snapshot_keeper.hpp"
#include "actors/run/snapshot_store.hpp"
#include "base/digest.hpp"
#include "tests/support/temp_dir.hpp"

using namespace actorrec;
using namespace actorrec::trainer;
using namespace std::chrono_literals;

namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace

TEST_CASE("a piece assembled from its chunks in order is the piece; a damaged, missing or extra chunk names it",
          "[snapshot_store]") {
  const std::string piece = RandomBytes(10000, 1);
  const uint64_t chunk = 1000;
  REQUIRE(ChunkCount(piece.size(), chunk) == 10);
  CHECK(ChunkCount(0, chunk) == 1);
  CHECK(ChunkCount(10001, chunk) == 11);
  const std::string what = "shard-0-of-2.ckpt of snapshot batch-10";
  auto assemble = [&](auto&& change) -> Result<std::string> {
    PieceAssembly a(what, piece.size(), Digest64(piece));
    for (uint64_t off = 0; off < piece.size(); off += chunk) {
      std::string bytes = piece.substr(off, chunk);
      if (!change(off, &bytes)) continue;
      if (Status st = a.Add(off, bytes); !st.ok()) return st;
    }
    return a.Finish();
  };
  auto whole = assemble([](uint64_t, std::string*) { return true; });
  REQUIRE(whole.ok());
  CHECK(*whole == piece);

  auto damaged = assemble([](uint64_t off, std::string* b) {
    if (off == 3000) (*b)[17] ^= 0x10;
    return true;
  });
  REQUIRE(damaged.status().code() == Status::Code::kCorruption);
  CHECK_THAT(damaged.status().message(), Catch::Contains(what) && Catch::Contains("checksum mismatch"));

  auto missing = assemble([](uint64_t off, std::string*) { return off != 4000; });
  REQUIRE(missing.status().code() == Status::Code::kCorruption);
  CHECK_THAT(missing.status().message(),
             Catch::Contains(what) && Catch::Contains("got the chunk at byte 5000, expected the one at byte 4000"));

  auto last_missing = assemble([](uint64_t off, std::string*) { return off != 9000; });
  REQUIRE(last_missing.status().code() == Status::Code::kCorruption);
  CHECK_THAT(last_missing.status().message(), Catch::Contains(what) && Catch::Contains("9000 of its 10000 bytes"));

  PieceAssembly extra(what, 4, Digest64("abcd"));
  REQUIRE(extra.Add(0, "abcd").ok());
  CHECK_THAT(extra.Add(4, "e").message(), Catch::Contains(what) && Catch::Contains("ends past"));
}

TEST_CASE("a keeper sends a piece to another keeper in several chunks, which refuses a damaged or short one by name",
          "[snapshot_store]") {
  ::setenv("ACTORREC_SNAPSHOT_CHUNK_BYTES", "1000", 1);
  REQUIRE(PieceChunkBytes() == 1000);
  testing::TempDir dir;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor from = SpawnSnapshotKeeper(sys, dir.File("from"));
  caf::actor to = SpawnSnapshotKeeper(sys, dir.File("to"));
  const std::string piece = RandomBytes(10500, 2);  // 11 chunks
  auto ok = [](ok_atom) {};
  REQUIRE(AskAndWait(sys, from, 30s, [](std::string&) {}, snap_begin_atom::value, uint64_t{5}).ok());
  REQUIRE(AskAndWait(sys, from, 30s, ok, snap_put_atom::value, uint64_t{5}, std::string("shard-1-of-2.ckpt"), piece).ok());
  REQUIRE(AskAndWait(sys, from, 30s, ok, snap_send_atom::value, uint64_t{5}, std::string("shard-1-of-2.ckpt"), to).ok());
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_commit_atom::value, uint64_t{5}).ok());
  CHECK(*SnapshotStore(dir.File("to")).Read(5, "shard-1-of-2.ckpt") == piece);
  // Read back a chunk at a time, as a member restoring it does.
  uint64_t size = 0, digest = 0;
  REQUIRE(AskAndWait(
              sys, to, 30s,
              [&](uint64_t s, uint64_t d) {
                size = s;
                digest = d;
              },
              snap_stat_atom::value, uint64_t{5}, std::string("shard-1-of-2.ckpt"))
              .ok());
  CHECK(size == piece.size());
  CHECK(digest == Digest64(piece));
  std::string chunk;
  REQUIRE(AskAndWait(
              sys, to, 30s, [&](std::string& b) { chunk = std::move(b); }, snap_get_atom::value, uint64_t{5},
              std::string("shard-1-of-2.ckpt"), uint64_t{10000}, uint64_t{1000})
              .ok());
  CHECK(chunk == piece.substr(10000));

  // A chunk damaged on the way: the seal names the piece; nothing is kept.
  const std::string name = "shard-0-of-2.ckpt";
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_offer_atom::value, uint64_t{10}, name, uint64_t{6}, Digest64("abcdef")).ok());
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_chunk_atom::value, uint64_t{10}, name, uint64_t{0}, std::string("abc")).ok());
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_chunk_atom::value, uint64_t{10}, name, uint64_t{3}, std::string("dEf")).ok());
  Status sealed = AskAndWait(sys, to, 30s, ok, snap_seal_atom::value, uint64_t{10}, name);
  CHECK_THAT(sealed.message(), Catch::Contains(name + " of snapshot batch-10") && Catch::Contains("checksum mismatch"));
  // A missing chunk.
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_offer_atom::value, uint64_t{10}, name, uint64_t{6}, Digest64("abcdef")).ok());
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_chunk_atom::value, uint64_t{10}, name, uint64_t{0}, std::string("abc")).ok());
  sealed = AskAndWait(sys, to, 30s, ok, snap_seal_atom::value, uint64_t{10}, name);
  CHECK_THAT(sealed.message(), Catch::Contains(name + " of snapshot batch-10") && Catch::Contains("3 of its 6 bytes"));
  REQUIRE(AskAndWait(sys, to, 30s, [](std::string&) {}, snap_begin_atom::value, uint64_t{10}).ok());
  REQUIRE(AskAndWait(sys, to, 30s, ok, snap_commit_atom::value, uint64_t{10}).ok());
  CHECK(!SnapshotStore(dir.File("to")).Has(10, name));
  ::unsetenv("ACTORREC_SNAPSHOT_CHUNK_BYTES");
  caf::anon_send_exit(from, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(to, caf::exit_reason::user_shutdown);
}
