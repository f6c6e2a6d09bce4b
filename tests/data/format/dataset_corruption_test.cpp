// Every corrupted byte is caught: header, index and footer at open, chunks on
// first read (or at open when asked), with messages naming file and chunk.
#include "data/format/dataset.hpp"

#include <catch2/catch.hpp>

#include <cstring>

#include "data/format/layout.hpp"
#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

// A small dataset of 4 chunks, multi-hot or not, and its bytes.
struct Fixture {
  explicit Fixture(bool multi_hot) {
    std::mt19937_64 rng(11);
    const DatasetSchema schema{{"I1", "I2", "I3"}, {{"C1", 50}, {"site_id", 7}}};
    WriteInPieces(rng, path, schema, RandomBlock(rng, schema, {multi_hot, false}, 14),
                  WriterOptions(4, {multi_hot, false}));
    bytes = ReadBytes(path);
    std::memcpy(&header_bytes, bytes.data() + 12, 4);
    std::memcpy(&index_offset, bytes.data() + bytes.size() - kFooterBytes, 8);
  }
  // Opens a copy of the file with `bytes` replaced.
  Status OpenWith(const std::string& changed, DatasetOptions options = {}) const {
    WriteBytes(copy, changed);
    return Dataset::Open(copy, options).status();
  }
  ScratchDir dir;
  std::string path = dir.File("d.ards");
  std::string copy = dir.File("copy.ards");
  std::string bytes;
  uint32_t header_bytes = 0;
  uint64_t index_offset = 0;
};

}  // namespace

TEST_CASE("Every flipped bit of the header, index and footer fails open", "[data]") {
  const Fixture f(GENERATE(false, true));
  REQUIRE(f.OpenWith(f.bytes).ok());
  for (size_t at = 0; at < f.bytes.size(); ++at) {
    if (at == f.header_bytes) at = f.index_offset;  // skip the chunks: checked on read
    for (int bit = 0; bit < 8; ++bit) {
      std::string changed = f.bytes;
      changed[at] = static_cast<char>(changed[at] ^ (1 << bit));
      CAPTURE(at, bit);
      CHECK(!f.OpenWith(changed).ok());
    }
  }
}

TEST_CASE("A flipped byte in a chunk fails reads of that chunk, naming it", "[data]") {
  const Fixture f(GENERATE(false, true));
  for (size_t at = f.header_bytes; at < f.index_offset; ++at) {
    std::string changed = f.bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x20);
    CAPTURE(at);
    // At open only when asked for.
    Status at_open = f.OpenWith(changed, {.verify_at_open = true});
    CHECK(at_open.code() == Status::Code::kCorruption);
    CHECK_THAT(at_open.message(), Catch::Contains("checksum mismatch in chunk ") && Catch::Contains(f.copy));
    auto dataset = Dataset::Open(f.copy);
    REQUIRE(dataset.ok());
    // Find the chunk from the error of a whole read, then check that reads
    // that avoid it succeed and reads that touch it fail the same way.
    SampleBlock got;
    Status whole = (*dataset)->Read(0, 14, &got);
    REQUIRE(whole.message() == at_open.message());
    uint64_t bad = 0;
    while (!Catch::Contains("chunk " + std::to_string(bad) + " ").match(whole.message())) ++bad;
    REQUIRE(bad < 4);
    for (uint64_t c = 0; c < 4; ++c) {
      const uint64_t end = std::min<uint64_t>(14, 4 * c + 4);
      CHECK((*dataset)->Read(4 * c, end, &got).ok() == (c != bad));
      const std::vector<uint64_t> one{4 * c + 1};
      CHECK((*dataset)->ReadSamples(one, &got).ok() == (c != bad));
    }
  }
}

TEST_CASE("The chunk is named as in 'checksum mismatch in chunk 2 of FILE'", "[data]") {
  const Fixture f(false);
  std::string changed = f.bytes;
  // Chunks of 4 single-hot samples with 3 dense features and 2 tables take
  // 16 (labels) + 48 (dense) + 2 * 16 (ids) + 8 (checksum) = 104 bytes.
  changed[f.header_bytes + 2 * 104 + 5] ^= 1;
  WriteBytes(f.copy, changed);
  auto dataset = Dataset::Open(f.copy);
  REQUIRE(dataset.ok());
  SampleBlock got;
  CHECK((*dataset)->Read(0, 8, &got).ok());
  CHECK((*dataset)->Read(0, 9, &got).message() == "checksum mismatch in chunk 2 of " + f.copy);
}

TEST_CASE("Truncated files are refused at open", "[data]") {
  const Fixture f(true);
  for (size_t len = 1; len < f.bytes.size(); ++len) {
    CAPTURE(len);
    const Status s = f.OpenWith(f.bytes.substr(0, len));
    CHECK(s.code() == Status::Code::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("truncated") && Catch::StartsWith(f.copy + ": "));
  }
  CHECK_THAT(f.OpenWith("").message(), Catch::Contains("not an actorrec dataset"));
  CHECK_THAT(f.OpenWith(f.bytes + "x").message(), Catch::Contains("bytes appended"));
}

TEST_CASE("A file without the magic is not an actorrec dataset", "[data]") {
  const Fixture f(false);
  const Status s = f.OpenWith("0\t1\t5\t0\t1382\t4\t15\t2\t181\t1\t2\t\t2\t68fd1e64\n");
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message() == f.copy + ": not an actorrec dataset (no magic)");
  CHECK(Dataset::Open(f.dir.File("missing")).status().code() == Status::Code::kNotFound);
}

TEST_CASE("A newer format version is refused naming both versions", "[data]") {
  const Fixture f(false);
  std::string changed = f.bytes;
  changed[8] = 3;
  const Status s = f.OpenWith(changed);
  CHECK(s.code() == Status::Code::kNotSupported);
  CHECK(s.message() == f.copy + ": format version 3 is newer than this build's 1");
}
