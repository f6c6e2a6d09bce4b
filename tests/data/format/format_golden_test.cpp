// A fixed small dataset has fixed bytes, so the format cannot change by
// accident; its fields sit where layout.hpp says.
#include "data/format/layout.hpp"

#include <catch2/catch.hpp>

#include <cstring>

#include "base/digest.hpp"
#include "data/format/dataset_writer.hpp"
#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

template <class T>
T At(const std::string& bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

// Three samples, one dense feature, a single-hot and a multi-hot table, two
// samples per chunk.
std::string GoldenBytes(const ScratchDir& dir) {
  const DatasetSchema schema{{"I1"}, {{"C1", 10}, {"C2", 5}}};
  SampleBlock block;
  block.Reset(schema);
  block.labels = {1, 0, 1};
  block.dense = {0.5f, 2, -1};
  block.tables[0] = {{0, 1, 2, 3}, {7, 0, 9}};
  block.tables[1] = {{0, 2, 2, 5}, {1, 2, 3, 4, 0}};
  const std::string path = dir.File("golden.ards");
  auto writer = DatasetWriter::Create(path, schema, WriterOptions(2, {false, true}));
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Append(block).ok());
  REQUIRE((*writer)->Finish().ok());
  return ReadBytes(path);
}

}  // namespace

TEST_CASE("A fixed small dataset has fixed bytes", "[data]") {
  ScratchDir dir;
  const std::string bytes = GoldenBytes(dir);
  // header 112 = 48 fixed + 8 ("I1") + 2 * 24 (tables) + 8 checksum;
  // chunk 0 (2 samples) 56 = 8 labels + 8 dense + 8 C1 + 16 C2 offsets +
  //   8 C2 values + 8 checksum; chunk 1 (1 sample) 56 = 8 + 8 + 8 + 8 + 16 + 8;
  // index 2 * 16; footer 32.
  REQUIRE(bytes.size() == 288);
  CHECK(bytes.substr(0, 8) == std::string("\x89" "ARD\r\n\x1a\n"));
  CHECK(At<uint32_t>(bytes, 8) == 1);
  CHECK(At<uint32_t>(bytes, 12) == 112);
  CHECK(At<uint64_t>(bytes, 16) == 288);
  CHECK(At<uint64_t>(bytes, 24) == 3);
  CHECK(At<uint32_t>(bytes, 32) == 2);
  CHECK(At<uint32_t>(bytes, 36) == 1);
  CHECK(At<uint32_t>(bytes, 40) == 2);
  CHECK(At<uint32_t>(bytes, 48) == 2);
  CHECK(bytes.substr(52, 4) == std::string("I1\0\0", 4));
  CHECK(At<uint64_t>(bytes, 56) == 10);  // C1: rows, single-hot, name
  CHECK(At<uint32_t>(bytes, 64) == 0);
  CHECK(At<uint32_t>(bytes, 68) == 2);
  CHECK(bytes.substr(72, 8) == std::string("C1\0\0\0\0\0\0", 8));
  CHECK(At<uint32_t>(bytes, 88) == 1);  // C2 is multi-hot
  CHECK(At<uint64_t>(bytes, 104) == Digest64(std::string_view(bytes).substr(0, 104)));
  // Chunk 0 at 112: labels 1, 0; dense 0.5, 2; C1 7, 0; C2 offsets 0 2 2 (pad); values 1 2.
  CHECK(At<float>(bytes, 112) == 1.0f);
  CHECK(At<float>(bytes, 124) == 2.0f);
  CHECK(At<uint32_t>(bytes, 128) == 7);
  CHECK(At<uint32_t>(bytes, 140) == 2);
  CHECK(At<uint32_t>(bytes, 148) == 0);  // padding
  CHECK(At<uint32_t>(bytes, 156) == 2);
  CHECK(At<uint64_t>(bytes, 160) == Digest64(std::string_view(bytes).substr(112, 48), 0));
  // Chunk 1 at 168: C2 offsets 0 3 at 192, values 3 4 0 at 200; seed 1.
  CHECK(At<uint32_t>(bytes, 196) == 3);
  CHECK(At<uint32_t>(bytes, 208) == 0);
  CHECK(At<uint64_t>(bytes, 216) == Digest64(std::string_view(bytes).substr(168, 48), 1));
  // Index at 224, footer at 256.
  CHECK(At<uint64_t>(bytes, 224) == 112);
  CHECK(At<uint64_t>(bytes, 232) == 56);
  CHECK(At<uint64_t>(bytes, 240) == 168);
  CHECK(At<uint64_t>(bytes, 256) == 224);
  CHECK(At<uint64_t>(bytes, 264) == 2);
  // The whole file: its hex dump was checked against layout.hpp by hand,
  // and its checksums with XXH3 called directly, when this was written.
  CHECK(Digest64Hex(bytes) == "8e13f06867be3ed6");
}
