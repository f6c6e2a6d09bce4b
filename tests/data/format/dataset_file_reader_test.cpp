// A dataset file streams through the SampleReader interface, converts into
// an identical file, and reports corrupt chunks under the bad-record policy.
#include "data/format/dataset_file_reader.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "data/format/convert.hpp"
#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

// Reads `reader` to its end in pieces of up to `max` samples.
Status ReadAll(SampleReader& reader, size_t max, SampleBlock* all) {
  all->Reset(reader.schema());
  SampleBlock block;
  for (;;) {
    if (Status s = reader.Next(max, &block); !s.ok()) return s;
    if (block.empty()) return Status::Ok();
    REQUIRE(block.size() <= max);
    all->Append(block, 0, block.size());
  }
}

// A source that serves one block and says it skipped two records.
class FakeSource : public SampleReader {
 public:
  FakeSource(DatasetSchema schema, SampleBlock block) : schema_(std::move(schema)), block_(std::move(block)) {
    bad_.skipped = 2;
    bad_.by_reason["wrong column count"] = 2;
    bad_.first = "train.txt:7: wrong column count";
  }
  const DatasetSchema& schema() const override { return schema_; }
  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    const size_t end = std::min(block_.size(), at_ + max_samples);
    out->Append(block_, at_, end);
    at_ = end;
    return Status::Ok();
  }
  const BadRecords& bad_records() const override { return bad_; }

 private:
  DatasetSchema schema_;
  SampleBlock block_;
  BadRecords bad_;
  size_t at_ = 0;
};

struct Fixture {
  Fixture() {
    std::mt19937_64 rng(21);
    WriteInPieces(rng, path, schema, samples, WriterOptions(10));
  }
  std::mt19937_64 rng{5};
  DatasetSchema schema{{"I1"}, {{"C1", 40}, {"C2", 9}}};
  SampleBlock samples = RandomBlock(rng, schema, {true, false}, 57);
  ScratchDir dir;
  std::string path = dir.File("d.ards");
};

}  // namespace

TEST_CASE("The dataset file reader streams the samples of the file in order", "[data]") {
  Fixture f;
  auto reader = DatasetFileReader::Open(f.path);
  REQUIRE(reader.ok());
  CHECK(SameSchema((*reader)->schema(), f.schema));
  SampleBlock all;
  REQUIRE(ReadAll(**reader, GENERATE(1, 7, 10, 23, 1000), &all).ok());
  CHECK(all == f.samples);
  CHECK((*reader)->bad_records().skipped == 0);
}

TEST_CASE("A dataset file converts into an identical dataset", "[data]") {
  Fixture f;
  auto reader = DatasetFileReader::Open(f.path);
  REQUIRE(reader.ok());
  const std::string out = f.dir.File("copy.ards");
  ConvertOptions options;
  options.writer = WriterOptions(10);
  options.block_samples = 13;
  auto report = Convert(**reader, out, options);
  REQUIRE(report.ok());
  CHECK(report->samples == 57);
  CHECK(report->bytes == ReadBytes(out).size());
  CHECK(report->seconds >= 0);
  CHECK(ReadBytes(out) == ReadBytes(f.path));
}

TEST_CASE("Convert carries the source's skipped records into its report", "[data]") {
  Fixture f;
  FakeSource source(f.schema, f.samples);
  auto report = Convert(source, f.dir.File("out.ards"));
  REQUIRE(report.ok());
  CHECK(report->samples == 57);
  CHECK(report->bad_records.skipped == 2);
  CHECK(report->bad_records.by_reason.at("wrong column count") == 2);
  CHECK(report->bad_records.first == "train.txt:7: wrong column count");
}

TEST_CASE("Convert leaves no file when the source does not fit the format", "[data]") {
  Fixture f;
  SampleBlock bad = f.samples;
  bad.tables[1].values[40] = 9;
  FakeSource source(f.schema, bad);
  const std::string out = f.dir.File("out.ards");
  ConvertOptions options;
  options.block_samples = 16;
  auto report = Convert(source, out, options);
  CHECK_THAT(report.status().message(), Catch::Contains("row id 9 in table C2"));
  CHECK(!std::filesystem::exists(out));
  CHECK(!std::filesystem::exists(out + ".tmp"));
}

TEST_CASE("A corrupt chunk fails the stream or is skipped and counted", "[data]") {
  Fixture f;
  // Corrupt the last byte of chunk 2's labels (samples 20..29): chunk 2
  // starts after the header and two chunks, whose sizes the index holds.
  std::string bytes = ReadBytes(f.path);
  uint64_t index_offset;
  std::memcpy(&index_offset, bytes.data() + bytes.size() - 32, 8);
  uint64_t chunk2;
  std::memcpy(&chunk2, bytes.data() + index_offset + 2 * 16, 8);
  bytes[chunk2 + 3] ^= 0x10;
  WriteBytes(f.path, bytes);

  SECTION("under fail, naming the chunk") {
    auto reader = DatasetFileReader::Open(f.path, BadRecordPolicy::kFail);
    REQUIRE(reader.ok());
    SampleBlock all;
    Status s = ReadAll(**reader, 15, &all);
    CHECK(s.message() == "checksum mismatch in chunk 2 of " + f.path);
    CHECK(all.size() == 20);  // chunks 0 and 1 came through first
  }
  SECTION("under skip, counting its samples") {
    auto reader = DatasetFileReader::Open(f.path, BadRecordPolicy::kSkip);
    REQUIRE(reader.ok());
    SampleBlock all;
    REQUIRE(ReadAll(**reader, 15, &all).ok());
    SampleBlock expected;
    expected.Reset(f.schema);
    expected.Append(f.samples, 0, 20);
    expected.Append(f.samples, 30, 57);
    CHECK(all == expected);
    CHECK((*reader)->bad_records().skipped == 10);
    CHECK((*reader)->bad_records().by_reason.at("corrupt chunk") == 10);
    CHECK((*reader)->bad_records().first == "checksum mismatch in chunk 2 of " + f.path);
  }
}
