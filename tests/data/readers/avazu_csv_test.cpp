// Tests of the Avazu CSV reader.
#include "data/readers/avazu_csv.hpp"

#include <catch2/catch.hpp>

#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

const char kHeader[] =
    "id,click,hour,C1,banner_pos,site_id,site_domain,site_category,app_id,app_domain,app_category,device_id,"
    "device_ip,device_model,device_type,device_conn_type,C14,C15,C16,C17,C18,C19,C20,C21\n";
// 2014-10-21 was a Tuesday (day 2), 2014-10-26 a Sunday (day 0).
const char kRows[] =
    "1000009418151094273,0,14102100,1005,0,1fbe01fe,f3845767,28905ebd,ecad2386,7801e8d9,07d7df22,a99f214a,"
    "ddd2926e,44956a24,1,2,15706,320,50,1722,0,35,-1,79\n"
    "10000169349117863715,1,14102623,1005,0,1fbe01fe,f3845767,28905ebd,ecad2386,7801e8d9,07d7df22,a99f214a,"
    "96809ac8,711ee120,1,0,15704,320,50,1722,0,35,100084,79\n"
    "10000371904215119486,0,14102101,1005,1,,f3845767,28905ebd,ecad2386,7801e8d9,07d7df22,a99f214a,"
    "b3cf8def,8a4875bd,1,0,15704,320,50,1722,0,35,100084,79\n";

std::shared_ptr<const CategoricalMapping> Dictionary(const std::string& path) {
  auto format = AvazuCsvFormat();
  auto mapping = BuildMapping({path}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kFail);
  REQUIRE(mapping.ok());
  return std::make_shared<const CategoricalMapping>(std::move(mapping).value());
}

TEST_CASE("Avazu CSV turns hour into hour of day and day of week and maps the rest", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("train.csv"), std::string(kHeader) + kRows);
  const auto mapping = Dictionary(dir.File("train.csv"));
  REQUIRE(mapping->num_tables() == kAvazuTables);
  CHECK(mapping->name(0) == "hour_of_day");
  CHECK(mapping->name(1) == "day_of_week");
  CHECK(mapping->name(2) == "C1");
  CHECK(mapping->name(22) == "C21");
  auto reader = TextReader::Open({dir.File("train.csv")}, AvazuCsvFormat(), mapping, BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  CHECK((*reader)->schema().num_dense() == 0);
  const auto got = Drain(**reader, 2);
  REQUIRE(got.status.ok());
  REQUIRE(got.samples.size() == 3);
  CHECK(got.samples.labels == std::vector<float>{0, 1, 0});
  const auto& hod = got.samples.tables[0].values;
  const auto& dow = got.samples.tables[1].values;
  CHECK(hod[0] == mapping->Map(0, 0));
  CHECK(hod[1] == mapping->Map(0, 23));
  CHECK(hod[2] == mapping->Map(0, 1));
  CHECK(dow[0] == mapping->Map(1, 2));  // Tuesday
  CHECK(dow[1] == mapping->Map(1, 0));  // Sunday
  CHECK(dow[0] == dow[2]);
  CHECK(dow[0] != dow[1]);
  // site_id (table 4) is missing in the third row; the same site in rows 1-2.
  CHECK(got.samples.tables[4].values == std::vector<RowId>{2, 2, kMissingRow});
  // device_ip (table 11) differs in every row: three distinct rows >= 2.
  const auto& ip = got.samples.tables[11].values;
  CHECK((ip[0] >= 2 && ip[1] >= 2 && ip[2] >= 2 && ip[0] != ip[1] && ip[1] != ip[2] && ip[0] != ip[2]));
}

TEST_CASE("Avazu CSV names the file and the column of a header mismatch", "[data]") {
  ScratchDir dir;
  auto mapping = Dictionary([&] {
    WriteBytes(dir.File("good.csv"), std::string(kHeader) + kRows);
    return dir.File("good.csv");
  }());
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  SECTION("a renamed column") {
    std::string header = kHeader;
    header.replace(header.find("hour"), 4, "hours");
    WriteBytes(dir.File("bad.csv"), header + kRows);
    auto reader = TextReader::Open({dir.File("bad.csv")}, AvazuCsvFormat(), mapping, policy);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    CHECK(got.status.message() == dir.File("bad.csv") + ":1: header mismatch: column 3 is 'hours', expected 'hour'");
  }
  SECTION("a missing column") {
    std::string header = kHeader;
    header.replace(header.find(",C21"), 4, "");
    WriteBytes(dir.File("bad.csv"), header + kRows);
    auto reader = TextReader::Open({dir.File("bad.csv")}, AvazuCsvFormat(), mapping, policy);
    REQUIRE(reader.ok());
    CHECK(Drain(**reader).status.message() ==
          dir.File("bad.csv") + ":1: header mismatch: expected 24 columns, found 23");
  }
  SECTION("the test split's header, which has no click column") {
    std::string header = kHeader;
    header.replace(header.find("click,"), 6, "");
    WriteBytes(dir.File("test.csv"), header);
    auto reader = TextReader::Open({dir.File("test.csv")}, AvazuCsvFormat(), mapping, policy);
    REQUIRE(reader.ok());
    CHECK_THAT(Drain(**reader).status.message(), Catch::Contains("column 2 is 'hour', expected 'click'"));
  }
}

TEST_CASE("Avazu CSV counts an impossible hour as a bad record", "[data]") {
  ScratchDir dir;
  std::string rows = kRows;
  rows.replace(rows.find("14102623"), 8, "14023124");  // February 31st
  WriteBytes(dir.File("train.csv"), std::string(kHeader) + rows);
  auto mapping = CategoricalMapping::Hashing([] {
    std::vector<TableSchema> t;
    auto format = AvazuCsvFormat();
    for (const auto& name : format->table_names()) t.push_back({name, 100});
    return t;
  }());
  REQUIRE(mapping.ok());
  auto shared = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
  auto skip = TextReader::Open({dir.File("train.csv")}, AvazuCsvFormat(), shared, BadRecordPolicy::kSkip);
  REQUIRE(skip.ok());
  const auto got = Drain(**skip);
  REQUIRE(got.status.ok());
  CHECK(got.samples.size() == 2);
  CHECK((*skip)->bad_records().by_reason.at("bad hour value") == 1);
  CHECK((*skip)->bad_records().first ==
        dir.File("train.csv") + ":3: bad hour value: hour is '14023124', expected YYMMDDHH");
}

TEST_CASE("An Avazu file read in pieces checks its header once and gives the whole file's samples", "[data]") {
  ScratchDir dir;
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += kRows;
  WriteBytes(dir.File("train.csv"), std::string(kHeader) + rows);
  auto mapping = Dictionary(dir.File("train.csv"));
  auto whole = TextReader::Open({dir.File("train.csv")}, AvazuCsvFormat(), mapping, BadRecordPolicy::kFail);
  REQUIRE(whole.ok());
  const auto want = Drain(**whole);
  REQUIRE(want.status.ok());
  REQUIRE(want.samples.size() == 120);
  for (uint64_t piece_bytes : {uint64_t{100}, uint64_t{777}, uint64_t{5000}}) {
    auto pieces = SplitIntoPieces(dir.File("train.csv"), piece_bytes);
    REQUIRE(pieces.ok());
    REQUIRE(pieces->size() > 1);
    SampleBlock got;
    got.Reset((*whole)->schema());
    for (const TextPiece& piece : *pieces) {
      auto reader = TextReader::Open(std::vector<TextPiece>{piece}, AvazuCsvFormat(), mapping, BadRecordPolicy::kFail);
      REQUIRE(reader.ok());
      const auto part = Drain(**reader);
      REQUIRE(part.status.ok());
      got.Append(part.samples, 0, part.samples.size());
    }
    CHECK(got == want.samples);
  }
}

}  // namespace
}  // namespace actorrec::data::readers
