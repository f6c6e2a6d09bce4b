// Shard checkpoints: round trips, and every truncation, flipped byte, wrong
// magic or version refused with a named error, never a crash.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/embedding/shard_store.hpp"
#include "base/digest.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {
namespace {

namespace fs = std::filesystem;

std::string TempFile(const std::string& name) {
  return (fs::temp_directory_path() / ("actorrec_ckpt_" + std::to_string(::getpid()) + "_" + name)).string();
}

// A plain write, no fsync: the corrupted copies are many and short-lived.
void Spit(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Init(uint32_t t, uint64_t r, float* out) {
  const uint64_t h = data::gen::HashPair(t, r);
  for (int k = 0; k < 3; ++k) out[k] = static_cast<float>((h >> (k * 16)) & 0xffff) / 65536.0f;
}

// A store with a few random rows touched and some overwritten.
ShardStore RandomStore(uint64_t seed, uint32_t shard, uint32_t shards, size_t touches) {
  ShardStore store(shard, shards, {40, 5000000, 1}, RowFormat{2, 1}, Init);
  data::gen::Rng rng(seed);
  for (size_t i = 0; i < touches; ++i) {
    uint32_t t = static_cast<uint32_t>(rng.Below(3));
    uint32_t r = static_cast<uint32_t>(rng.Below(t == 0 ? 40 : t == 1 ? 5000000 : 1));
    if (ShardOf(t, r, shards) != shard) continue;
    float row[3];
    if (rng.Below(2)) {
      for (float& x : row) x = static_cast<float>(rng.Normal());
      REQUIRE(store.Store(&t, &r, 1, row).ok());
    } else {
      REQUIRE(store.Fetch(&t, &r, 1, row).ok());
    }
  }
  return store;
}

Status LoadStatus(const std::string& path) {
  int64_t batch = 0;
  return ShardStore::LoadCheckpoint(path, Init, &batch).status();
}

}  // namespace

TEST_CASE("a checkpoint loads back equal, over many seeds and chunkings", "[embedding]") {
  const std::string path = TempFile("roundtrip");
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const uint32_t shards = 1 + static_cast<uint32_t>(seed % 3), shard = static_cast<uint32_t>(seed / 3 % shards);
    const ShardStore store = RandomStore(seed, shard, shards, seed * 7);
    const uint32_t rows_per_chunk = static_cast<uint32_t>(seed % 4);  // 0: the default
    const int64_t batch = static_cast<int64_t>(seed) * 1000 - 5000;  // negative ones too
    REQUIRE(store.SaveCheckpoint(path, batch, rows_per_chunk).ok());
    int64_t loaded_batch = 0;
    auto loaded = ShardStore::LoadCheckpoint(path, Init, &loaded_batch);
    REQUIRE(loaded.ok());
    CHECK(loaded_batch == batch);
    CHECK(loaded->Digest() == store.Digest());
    CHECK(loaded->resident_rows() == store.resident_rows());
    CHECK(loaded->shard() == shard);
    CHECK(loaded->shards() == shards);
    CHECK(loaded->table_rows() == store.table_rows());
    CHECK(loaded->format().width == 2);
    CHECK(loaded->format().state_floats == 1);
    // Rows not in the checkpoint still come from init; the loaded store
    // keeps working.
    ShardStore copy = std::move(loaded).value();
    uint32_t t = 1, r = 0;
    while (ShardOf(t, r, shards) != shard) ++r;
    float a[3], b[3];
    REQUIRE(copy.Peek(t, r, a).ok());
    REQUIRE(store.Peek(t, r, b).ok());
    CHECK(std::memcmp(a, b, sizeof a) == 0);
  }
  fs::remove(path);
}

TEST_CASE("a checkpoint's bytes depend only on the content", "[embedding]") {
  // The same rows created in another order give the same file.
  ShardStore a(0, 1, {100, 1000000}, RowFormat{2, 1}, Init), b(0, 1, {100, 1000000}, RowFormat{2, 1}, Init);
  const uint32_t ta[] = {0, 1, 1, 0}, ra[] = {3, 999, 5, 99};
  const uint32_t tb[] = {1, 0, 0, 1}, rb[] = {5, 99, 3, 999};
  float out[12];
  REQUIRE(a.Fetch(ta, ra, 4, out).ok());
  REQUIRE(b.Fetch(tb, rb, 4, out).ok());
  const std::string pa = TempFile("order_a"), pb = TempFile("order_b");
  REQUIRE(a.SaveCheckpoint(pa, 7, 3).ok());
  REQUIRE(b.SaveCheckpoint(pb, 7, 3).ok());
  CHECK(Slurp(pa) == Slurp(pb));
  // Size: header 64 + 8*2, two chunks (3 + 1 rows of 20 bytes, 8 each), trailer 24.
  CHECK(Slurp(pa).size() == 80 + 4 * 20 + 2 * 8 + 24);
  fs::remove(pa);
  fs::remove(pb);
}

TEST_CASE("an empty shard checkpoints and loads", "[embedding]") {
  const ShardStore store(2, 3, {10}, RowFormat{4, 0}, [](uint32_t, uint64_t, float* out) { std::memset(out, 0, 16); });
  const std::string path = TempFile("empty");
  REQUIRE(store.SaveCheckpoint(path, -1).ok());
  int64_t batch = 0;
  auto loaded = ShardStore::LoadCheckpoint(path, Init, &batch);
  REQUIRE(loaded.ok());
  CHECK(batch == -1);
  CHECK(loaded->resident_rows() == 0);
  CHECK(loaded->Digest() == store.Digest());
  fs::remove(path);
}

TEST_CASE("every truncation of a checkpoint is Corruption, never a crash", "[embedding]") {
  const ShardStore store = RandomStore(11, 0, 2, 40);
  REQUIRE(store.resident_rows() > 6);
  const std::string path = TempFile("truncate"), cut = TempFile("truncated");
  REQUIRE(store.SaveCheckpoint(path, 3, 4).ok());
  const std::string full = Slurp(path);
  for (size_t n = 0; n < full.size(); ++n) {
    Spit(cut, std::string_view(full).substr(0, n));
    const Status st = LoadStatus(cut);
    INFO("length " << n << " of " << full.size() << ": " << st.ToString());
    CHECK(st.code() == Status::Code::kCorruption);
    CHECK_THAT(st.message(), Catch::Contains(cut));
  }
  // A byte too many is refused too.
  Spit(cut, full + "x");
  CHECK_THAT(LoadStatus(cut).message(), Catch::Contains("trailing bytes"));
  fs::remove(path);
  fs::remove(cut);
}

TEST_CASE("every flipped byte of a checkpoint is refused; in a chunk, naming it", "[embedding]") {
  const ShardStore store = RandomStore(12, 1, 2, 40);
  const size_t rows = store.resident_rows();
  REQUIRE(rows > 6);
  const std::string path = TempFile("flip"), bad = TempFile("flipped");
  const uint32_t k = 4;
  REQUIRE(store.SaveCheckpoint(path, 3, k).ok());
  const std::string full = Slurp(path);
  const size_t header = 64 + 8 * 3, row_bytes = 8 + 3 * 4;
  const size_t chunks = (rows + k - 1) / k;
  REQUIRE(full.size() == header + rows * row_bytes + chunks * 8 + 24);
  for (size_t i = 0; i < full.size(); ++i) {
    std::string bytes = full;
    bytes[i] = static_cast<char>(bytes[i] ^ (1 << (i % 8)));
    Spit(bad, bytes);
    const Status st = LoadStatus(bad);
    INFO("byte " << i << ": " << st.ToString());
    REQUIRE_FALSE(st.ok());
    if (i >= header && i < full.size() - 24) {
      // Chunk c spans k rows and its checksum.
      const size_t c = (i - header) / (k * row_bytes + 8);
      CHECK(st.code() == Status::Code::kCorruption);
      CHECK_THAT(st.message(), Catch::Contains("chunk " + std::to_string(c) + " of " + bad));
    } else if (i >= 8 && i < 12) {
      // The version: newer or zero, both named.
      CHECK_THAT(st.message(), Catch::Contains("format version"));
    } else if (i >= 12) {
      CHECK(st.code() == Status::Code::kCorruption);
    }
  }
  fs::remove(path);
  fs::remove(bad);
}

TEST_CASE("a wrong magic or version is named as such", "[embedding]") {
  const ShardStore store = RandomStore(13, 0, 1, 10);
  const std::string path = TempFile("magic");
  REQUIRE(store.SaveCheckpoint(path, 0).ok());
  const std::string full = Slurp(path);

  std::string bytes = full;
  bytes[3] = 'D';  // a dataset file's magic
  Spit(path, bytes);
  Status st = LoadStatus(path);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains(path) && Catch::Contains("not an actorrec shard checkpoint"));

  bytes = full;
  bytes[8] = 2;  // version 2
  Spit(path, bytes);
  st = LoadStatus(path);
  CHECK(st.code() == Status::Code::kNotSupported);
  CHECK_THAT(st.message(), Catch::Contains("format version 2 is newer than this build's 1"));

  Spit(path, std::string_view("hello, world: not a checkpoint"));
  CHECK(LoadStatus(path).code() == Status::Code::kInvalidArgument);

  fs::remove(path);
  CHECK(LoadStatus(path).code() == Status::Code::kNotFound);
}

TEST_CASE("a checkpoint that lists a row of another shard is Corruption", "[embedding]") {
  // A correctly checksummed file from shard 0 of 2, relabelled as shard 1:
  // the header checksum catches the edit, so rebuild it to reach the row check.
  const ShardStore store = RandomStore(14, 0, 2, 30);
  REQUIRE(store.resident_rows() > 0);
  const std::string path = TempFile("foreign");
  REQUIRE(store.SaveCheckpoint(path, 0).ok());
  std::string bytes = Slurp(path);
  const uint32_t one = 1;
  std::memcpy(bytes.data() + 12, &one, 4);
  const size_t h = 64 + 8 * 3;
  const uint64_t sum = Digest64(std::string_view(bytes).substr(0, h - 8));
  std::memcpy(bytes.data() + h - 8, &sum, 8);
  Spit(path, bytes);
  const Status st = LoadStatus(path);
  CHECK(st.code() == Status::Code::kCorruption);
  CHECK_THAT(st.message(), Catch::Contains("chunk 0 of " + path) && Catch::Contains("belongs to shard 0"));
  fs::remove(path);
}

}  // namespace actorrec::embedding
