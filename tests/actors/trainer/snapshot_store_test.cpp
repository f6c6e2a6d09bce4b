// SnapshotStore (actors/run/snapshot_store.hpp): a member's in-memory copies
// of recovery snapshots, written in two steps and selected at recovery.
#include "actors/run/snapshot_store.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

using actorrec::trainer::SnapshotStore;

TEST_CASE("a snapshot store commits pieces, keeps the newest two and rolls back to the coordinator's choice",
          "[snapshot_store]") {
  actorrec::testing::TempDir dir;
  SnapshotStore store(dir.File("store"));
  CHECK(!store.Latest().has_value());
  for (uint64_t k : {5, 10, 15}) {
    REQUIRE(store.Begin(k).ok());
    REQUIRE(store.Put(k, "dense.safetensors", "dense " + std::to_string(k)).ok());
    // Not readable as committed before the commit.
    CHECK(!store.Has(k, "dense.safetensors"));
    CHECK(*store.ReadPending(k, "dense.safetensors") == "dense " + std::to_string(k));
    REQUIRE(store.Commit(k).ok());
    CHECK(store.Latest() == std::optional<uint64_t>(k));
  }
  CHECK(!std::filesystem::exists(dir.File("store/batch-5")));  // the newest two are kept
  CHECK(*store.Read(10, "dense.safetensors") == "dense 10");
  CHECK(store.Read(10, "shard-0-of-2.ckpt").status().code() == actorrec::Status::Code::kNotFound);
  // A piece fetched from another member joins snapshot 10, which becomes
  // LATEST; the newer one goes.
  REQUIRE(store.Adopt(10, "shard-0-of-2.ckpt", "rows").ok());
  REQUIRE(store.Select(10).ok());
  CHECK(store.Latest() == std::optional<uint64_t>(10));
  CHECK(*store.Read(10, "shard-0-of-2.ckpt") == "rows");
  CHECK(!std::filesystem::exists(dir.File("store/batch-15")));
  CHECK(store.Commit(20).code() == actorrec::Status::Code::kNotFound);  // never begun
}

TEST_CASE("a snapshot store records the coordinator's newest commit apart from its own LATEST", "[snapshot_store]") {
  actorrec::testing::TempDir dir;
  SnapshotStore store(dir.File("store"));
  CHECK(!store.Committed().has_value());
  REQUIRE(store.Begin(10).ok());
  REQUIRE(store.Commit(10).ok());
  // Committed here, not yet by the coordinator: no mark.
  CHECK(!store.Committed().has_value());
  REQUIRE(store.MarkCommitted(10).ok());
  CHECK(store.Committed() == std::optional<uint64_t>(10));
  CHECK(store.Latest() == std::optional<uint64_t>(10));
  // A fresh store of the same directory (a restarted worker) reads it back.
  CHECK(SnapshotStore(dir.File("store")).Committed() == std::optional<uint64_t>(10));
}

TEST_CASE("a snapshot store refuses piece names that are not plain file names", "[snapshot_store]") {
  actorrec::testing::TempDir dir;
  SnapshotStore store(dir.File("store"));
  for (const std::string& bad : std::vector<std::string>{"", "../x", "a/b", ".hidden", "sp ace", std::string(201, 'a')}) {
    CAPTURE(bad);
    CHECK(store.Put(1, bad, "x").code() == actorrec::Status::Code::kInvalidArgument);
    CHECK(!store.Read(1, bad).ok());
    CHECK(!store.Adopt(1, bad, "x").ok());
  }
  CHECK(!std::filesystem::exists(dir.File("x")));
  CHECK(store.Put(1, "shard-1-of-2.ckpt", "x").ok());
}
