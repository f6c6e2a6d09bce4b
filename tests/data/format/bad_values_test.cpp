// Labels other than 0 and 1 and non-finite dense values: the writer refuses
// them, and a file that has them anyway (from elsewhere, or an older build)
// fails its chunk check naming the sample, or is skipped and counted.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "base/digest.hpp"
#include "data/format/dataset.hpp"
#include "data/format/dataset_file_reader.hpp"
#include "data/format/dataset_writer.hpp"
#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

const DatasetSchema kSchema{{"I1"}, {{"C1", 10}}};

// Three samples, one dense feature, one single-hot table; two per chunk.
SampleBlock Block() {
  SampleBlock block;
  block.Reset(kSchema);
  block.labels = {1, 0, 1};
  block.dense = {0.5f, 2, -1};
  block.tables[0] = {{0, 1, 2, 3}, {7, 0, 9}};
  return block;
}

Status WriteFile(const std::string& path, const SampleBlock& block) {
  auto writer = DatasetWriter::Create(path, kSchema, WriterOptions(2, {false}));
  REQUIRE(writer.ok());
  if (Status s = (*writer)->Append(block); !s.ok()) return s;
  return (*writer)->Finish().status();
}

// The file with chunk 0's float at `offset` (bytes into the chunk) set to
// `value`, and its checksum made right again: bad data in intact bytes.
void Tamper(const std::string& path, size_t offset, float value) {
  std::string bytes = ReadBytes(path);
  uint32_t chunk0 = 0;  // the header's size (layout.hpp): where chunk 0 starts
  std::memcpy(&chunk0, bytes.data() + 12, sizeof chunk0);
  std::memcpy(bytes.data() + chunk0 + offset, &value, sizeof value);
  // Chunk 0 of 2 samples: labels 8, dense 8, C1 8, then its checksum (seed 0).
  const uint64_t sum = Digest64(std::string_view(bytes).substr(chunk0, 24), 0);
  std::memcpy(bytes.data() + chunk0 + 24, &sum, sizeof sum);
  WriteBytes(path, bytes);
}

}  // namespace

TEST_CASE("The dataset writer refuses a label other than 0 or 1 and a non-finite dense value", "[data]") {
  ScratchDir dir;
  SampleBlock block = Block();
  SECTION("a label of 2") {
    block.labels[1] = 2;
    const Status s = WriteFile(dir.File("d.ards"), block);
    CHECK(s.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(dir.File("d.ards")) && Catch::Contains("has label 2 at sample 1"));
  }
  SECTION("a NaN") {
    block.dense[2] = std::numeric_limits<float>::quiet_NaN();
    const Status s = WriteFile(dir.File("d.ards"), block);
    CHECK_THAT(s.message(), Catch::Contains("non-finite dense value at sample 2: I1 is nan"));
  }
  SECTION("an infinity") {
    block.dense[0] = -std::numeric_limits<float>::infinity();
    CHECK_THAT(WriteFile(dir.File("d.ards"), block).message(), Catch::Contains("sample 0: I1 is -inf"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.File("d.ards")));  // nothing half-written
}

TEST_CASE("A dataset file holding a NaN or a label of 2 fails the read naming the sample, or skips its chunk",
          "[data]") {
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  REQUIRE(WriteFile(path, Block()).ok());
  std::string message;
  SECTION("a NaN dense value") {
    Tamper(path, 8 + 4, std::numeric_limits<float>::quiet_NaN());  // sample 1's I1
    message = "chunk 0 of " + path + ": sample 1: non-finite dense value: I1 is nan";
  }
  SECTION("a label of 2") {
    Tamper(path, 0, 2.0f);  // sample 0's label
    message = "chunk 0 of " + path + ": sample 0: unknown label value: label is 2, expected 0 or 1";
  }
  auto dataset = Dataset::Open(path);
  REQUIRE(dataset.ok());  // the header and index are fine
  SampleBlock got;
  const Status read = (*dataset)->Read(0, 3, &got);
  CHECK(read.code() == Status::Code::kInvalidArgument);
  CHECK(read.message() == message);
  CHECK(Dataset::Open(path, {.verify_at_open = true}).status().message() == message);

  auto fail = DatasetFileReader::Open(path, BadRecordPolicy::kFail);
  REQUIRE(fail.ok());
  CHECK((*fail)->Next(10, &got).message() == message);

  auto skip = DatasetFileReader::Open(path, BadRecordPolicy::kSkip);
  REQUIRE(skip.ok());
  REQUIRE((*skip)->Next(10, &got).ok());
  CHECK(got.size() == 1);  // chunk 1's sample
  CHECK(got.labels[0] == 1.0f);
  CHECK((*skip)->bad_records().skipped == 2);
  CHECK((*skip)->bad_records().by_reason.at("chunk with bad values") == 2);
  CHECK((*skip)->bad_records().first == message);
}
