// The writer is atomic, decides single-hot tables from the first chunk, and
// refuses samples that do not fit the schema.
#include "data/format/dataset_writer.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include "data/format/dataset.hpp"
#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

const DatasetSchema kSchema{{"I1", "I2"}, {{"C1", 100}, {"C2", 3}}};

SampleBlock Block(std::mt19937_64& rng, size_t n, std::vector<bool> multi_hot = {false, false}) {
  return RandomBlock(rng, kSchema, multi_hot, n);
}

}  // namespace

TEST_CASE("A writer destroyed without Finish leaves no file behind", "[data]") {
  std::mt19937_64 rng(1);
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  SECTION("where there was none") {
    auto writer = DatasetWriter::Create(path, kSchema, WriterOptions(4));
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(Block(rng, 10)).ok());
    CHECK(std::filesystem::exists(path + ".tmp"));
    writer = Status::Unavailable("dropped");
    CHECK(!std::filesystem::exists(path));
    CHECK(!std::filesystem::exists(path + ".tmp"));
  }
  SECTION("and an older file stays as it was until Finish replaces it") {
    WriteBytes(path, "old");
    auto writer = DatasetWriter::Create(path, kSchema);
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(Block(rng, 10)).ok());
    CHECK(ReadBytes(path) == "old");
    REQUIRE((*writer)->Finish().ok());
    CHECK(Dataset::Open(path).ok());
    CHECK(!std::filesystem::exists(path + ".tmp"));
  }
}

TEST_CASE("Row ids outside their table are refused naming the table", "[data]") {
  std::mt19937_64 rng(2);
  ScratchDir dir;
  auto writer = DatasetWriter::Create(dir.File("d.ards"), kSchema);
  REQUIRE(writer.ok());
  SampleBlock block = Block(rng, 5);
  block.tables[1].values[3] = 3;
  Status s = (*writer)->Append(block);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("row id 3 in table C2, which has 3 rows"));
  // Errors are sticky.
  CHECK(!(*writer)->Finish().ok());
}

TEST_CASE("A block of another shape is refused", "[data]") {
  std::mt19937_64 rng(3);
  ScratchDir dir;
  auto writer = DatasetWriter::Create(dir.File("d.ards"), kSchema);
  REQUIRE(writer.ok());
  SampleBlock block = Block(rng, 5);
  block.dense.pop_back();
  CHECK_THAT((*writer)->Append(block).message(), Catch::Contains("2 dense features per sample"));
}

TEST_CASE("Single-hot tables hold exactly one id per sample", "[data]") {
  std::mt19937_64 rng(4);
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  SECTION("when declared") {
    auto writer = DatasetWriter::Create(path, kSchema, WriterOptions(4, {true, false}));
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(Block(rng, 6, {true, false})).ok());
    Status s = (*writer)->Append(Block(rng, 30, {false, true}));
    CHECK_THAT(s.message(), Catch::Contains("single-hot table C2"));
  }
  SECTION("when decided by the first chunk") {
    auto writer = DatasetWriter::Create(path, kSchema, WriterOptions(4));
    REQUIRE(writer.ok());
    SampleBlock first = Block(rng, 4, {true, false});
    first.tables[0] = {{0, 0, 2, 3, 3}, {1, 2, 3}};  // a bag of 0 and one of 2: multi-hot
    REQUIRE((*writer)->Append(first).ok());
    REQUIRE((*writer)->Append(Block(rng, 5, {true, false})).ok());
    Status s = (*writer)->Append(Block(rng, 30, {false, true}));
    CHECK_THAT(s.message(), Catch::Contains("single-hot table C2"));
  }
  SECTION("a dataset whose first chunk is single-hot everywhere stays readable") {
    auto writer = DatasetWriter::Create(path, kSchema, WriterOptions(4));
    REQUIRE(writer.ok());
    const SampleBlock block = Block(rng, 9);
    REQUIRE((*writer)->Append(block).ok());
    REQUIRE((*writer)->Finish().ok());
    auto dataset = Dataset::Open(path);
    REQUIRE(dataset.ok());
    CHECK(!(*dataset)->multi_hot(0));
    SampleBlock got;
    REQUIRE((*dataset)->Read(0, 9, &got).ok());
    CHECK(got == block);
  }
}

TEST_CASE("Writer options out of range are refused", "[data]") {
  ScratchDir dir;
  CHECK(!DatasetWriter::Create(dir.File("a"), kSchema, WriterOptions(0)).ok());
  CHECK(!DatasetWriter::Create(dir.File("b"), kSchema, WriterOptions(16384, {true})).ok());
  DatasetSchema huge{{}, {{"C1", (uint64_t{1} << 32) + 1}}};
  CHECK_THAT(DatasetWriter::Create(dir.File("c"), huge).status().message(), Catch::Contains("32-bit row ids"));
  CHECK(DatasetWriter::Create(dir.File("no/such/dir/d"), kSchema).status().code() == Status::Code::kIoError);
}
