// Bad input to the text readers, each case under both policies: the error
// names the file and line and what was expected; skip counts it by reason.
#include <catch2/catch.hpp>

#include <string>

#include "data/readers/criteo_tsv.hpp"
#include "data/readers/csv_schema.hpp"
#include "data/readers/fields.hpp"
#include "data/readers/line_source.hpp"
#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

std::string CriteoLine(std::string label = "1", std::string dense = "5", std::string cat = "68fd1e64",
                       size_t dense_fields = 13, size_t cat_fields = 26) {
  std::string line = label;
  // Appended piecewise: g++ 12 warns falsely (-Wrestrict) on "\t" + string.
  for (size_t j = 0; j < dense_fields; ++j) line.append("\t").append(j == 0 ? dense : "1");
  for (size_t t = 0; t < cat_fields; ++t) line.append("\t").append(t == 0 ? cat : "0a1b2c3d");
  return line;
}

std::shared_ptr<const CategoricalMapping> CriteoHashing() {
  std::vector<TableSchema> tables;
  for (size_t t = 0; t < kCriteoTables; ++t) tables.push_back({Numbered("C", t + 1), 1000});
  auto mapping = CategoricalMapping::Hashing(tables);
  REQUIRE(mapping.ok());
  return std::make_shared<const CategoricalMapping>(std::move(mapping).value());
}

struct Case {
  const char* name;
  std::string bad_line;  // becomes line 3 of 4
  const char* reason;
  std::string detail;
};

TEST_CASE("Each bad Criteo line fails naming file and line, or is skipped and counted", "[data]") {
  const std::string overlong_field(kMaxFieldBytes + 1, 'a');
  const std::string overlong_line(kMaxLineBytes + 10, '1');
  const Case cases[] = {
      {"too few columns", CriteoLine("1", "5", "68fd1e64", 13, 25), "wrong column count",
       "expected 40 tab-separated fields, found 39"},
      {"too many columns", CriteoLine("1", "5", "68fd1e64", 13, 27), "wrong column count",
       "expected 40 tab-separated fields, found more"},
      {"a non-numeric dense value", CriteoLine("1", "abc"), "non-numeric dense value",
       "I1 is 'abc', expected an integer or nothing"},
      {"a fractional dense value", CriteoLine("1", "2.5"), "non-numeric dense value",
       "I1 is '2.5', expected an integer or nothing"},
      {"bad hex", CriteoLine("1", "5", "68fd1e6z"), "bad hex", "C1 is '68fd1e6z', expected 1 to 8 hex digits"},
      {"over-long hex", CriteoLine("1", "5", "68fd1e64a"), "bad hex", "C1 is '68fd1e64a', expected 1 to 8 hex digits"},
      {"an unknown label", CriteoLine("2"), "unknown label value", "label is '2', expected 0 or 1"},
      {"an empty label", CriteoLine(""), "unknown label value", "label is '', expected 0 or 1"},
      {"an overlong field", CriteoLine("1", "5", overlong_field), "field too long",
       "field 15 is longer than 65536 bytes"},
      {"an overlong line", overlong_line, "line too long", "longer than 1048576 bytes"},
      {"a blank line before more data", "", "blank line", "expected a record, found an empty line before more data"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScratchDir dir;
      const std::string path = dir.File("day_0");
      WriteBytes(path, CriteoLine() + "\n" + CriteoLine("0") + "\n" + c.bad_line + "\n" + CriteoLine() + "\n");
      const std::string message = path + ":3: " + c.reason + ": " + c.detail;

      auto fail = TextReader::Open({path}, CriteoTsvFormat(), CriteoHashing(), BadRecordPolicy::kFail);
      REQUIRE(fail.ok());
      const auto failed = Drain(**fail, 1);
      CHECK(failed.status.code() == Status::Code::kInvalidArgument);
      CHECK(failed.status.message() == message);
      CHECK(failed.samples.size() == 2);  // the lines before it, nothing after
      SampleBlock after;
      CHECK((*fail)->Next(10, &after).message() == message);  // the stream stays ended

      auto skip = TextReader::Open({path}, CriteoTsvFormat(), CriteoHashing(), BadRecordPolicy::kSkip);
      REQUIRE(skip.ok());
      const auto skipped = Drain(**skip);
      REQUIRE(skipped.status.ok());
      CHECK(skipped.samples.size() == 3);
      const BadRecords& bad = (*skip)->bad_records();
      CHECK(bad.skipped == 1);
      CHECK(bad.by_reason.size() == 1);
      CHECK(bad.by_reason.count(c.reason) == 1);
      CHECK(bad.first == message);

      // The counting pass applies the same policy and reports what it skipped.
      auto format = CriteoTsvFormat();
      BadRecords counted;
      CHECK_FALSE(BuildMapping({path}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kFail).ok());
      auto built = BuildMapping({path}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kSkip, &counted);
      REQUIRE(built.ok());
      CHECK(counted.skipped == 1);
      CHECK(counted.first == message);
    }
  }
}

TEST_CASE("File-level problems of text input fail under both policies", "[data]") {
  ScratchDir dir;
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  const std::string path = dir.File("day_0");
  SECTION("an empty file") {
    WriteBytes(path, "");
    auto reader = TextReader::Open({path}, CriteoTsvFormat(), CriteoHashing(), policy);
    REQUIRE(reader.ok());
    CHECK(Drain(**reader).status.message() == path + ": file is empty");
  }
  SECTION("an empty second file after a good one") {
    WriteBytes(path, CriteoLine() + "\n");
    WriteBytes(dir.File("day_1"), "");
    auto reader = TextReader::Open({path, dir.File("day_1")}, CriteoTsvFormat(), CriteoHashing(), policy);
    REQUIRE(reader.ok());
    CHECK(Drain(**reader).status.message() == dir.File("day_1") + ": file is empty");
  }
  SECTION("a file of another schema: the first line has the wrong column count") {
    WriteBytes(path, "1,2,3\n" + CriteoLine() + "\n");
    auto reader = TextReader::Open({path}, CriteoTsvFormat(), CriteoHashing(), policy);
    REQUIRE(reader.ok());
    CHECK(Drain(**reader).status.message() ==
          path + ":1: schema does not match the file: expected 40 tab-separated fields, found 1");
  }
  SECTION("a missing file") {
    auto reader = TextReader::Open({dir.File("nope")}, CriteoTsvFormat(), CriteoHashing(), policy);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    CHECK(got.status.code() == Status::Code::kIoError);
    CHECK_THAT(got.status.message(), Catch::Contains(dir.File("nope")));
  }
}

TEST_CASE("Blank lines at the end of a text file are not records and not errors", "[data]") {
  ScratchDir dir;
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  const std::string path = dir.File("day_0");
  WriteBytes(path, CriteoLine() + "\n" + CriteoLine() + "\n\n \r\n\n");
  auto reader = TextReader::Open({path}, CriteoTsvFormat(), CriteoHashing(), policy);
  REQUIRE(reader.ok());
  const auto got = Drain(**reader);
  REQUIRE(got.status.ok());
  CHECK(got.samples.size() == 2);
  CHECK((*reader)->bad_records().skipped == 0);
}

TEST_CASE("Bad schema-CSV lines name the column and the values expected", "[data]") {
  ScratchDir dir;
  const std::string path = dir.File("adult.data");
  const std::string good =
      "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
      "Male, 2174, 0, 40, United-States, <=50K";
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  std::string bad, reason, detail;
  SECTION("an unknown label value") {
    bad = good.substr(0, good.rfind(',')) + ", maybe";
    reason = "unknown label value";
    detail = "income is 'maybe', expected one of '>50K', '>50K.', '<=50K', '<=50K.'";
  }
  SECTION("a non-numeric dense value") {
    bad = "thirty" + good.substr(2);
    reason = "non-numeric dense value";
    detail = "age is 'thirty', expected a number or the missing marker";
  }
  SECTION("a dense value beyond a float's range") {
    // Parses as a double, but as the float a model reads it is infinite.
    bad = "1e39" + good.substr(2);
    reason = "non-finite dense value";
    detail = "age is inf as a 32-bit float, expected a finite number";
  }
  SECTION("a missing column") {
    bad = good.substr(0, good.find(", 77516")) + good.substr(good.find(", 77516") + 7);
    reason = "wrong column count";
    detail = "expected 15 fields separated by ',', found 14";
  }
  WriteBytes(path, good + "\n" + bad + "\n" + good + "\n");
  auto format = CsvSchemaFormat(AdultCsvSchema());
  REQUIRE(format.ok());
  std::vector<TableSchema> tables;
  for (const auto& name : (*format)->table_names()) tables.push_back({name, 50});
  auto mapping = CategoricalMapping::Hashing(tables);
  REQUIRE(mapping.ok());
  auto reader = TextReader::Open({path}, std::move(format).value(),
                                 std::make_shared<const CategoricalMapping>(std::move(mapping).value()), policy);
  REQUIRE(reader.ok());
  const auto got = Drain(**reader);
  const std::string message = path + ":2: " + reason + ": " + detail;
  if (policy == BadRecordPolicy::kFail) {
    CHECK(got.status.message() == message);
  } else {
    REQUIRE(got.status.ok());
    CHECK(got.samples.size() == 2);
    CHECK((*reader)->bad_records().by_reason.at(reason) == 1);
    CHECK((*reader)->bad_records().first == message);
  }
}

}  // namespace
}  // namespace actorrec::data::readers
