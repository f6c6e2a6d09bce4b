// Tests of the libFM reader, with and without field ids.
#include "data/readers/libfm.hpp"

#include <catch2/catch.hpp>

#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

std::shared_ptr<const CategoricalMapping> Dictionary(const std::string& path, const LibfmOptions& options) {
  auto format = LibfmFormat(options);
  auto mapping = BuildMapping({path}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kFail);
  REQUIRE(mapping.ok());
  return std::make_shared<const CategoricalMapping>(std::move(mapping).value());
}

TEST_CASE("libFM lines give one table per position; labels > 0 are clicks, 1/-1 and 1/0 alike", "[data]") {
  ScratchDir dir;
  // Frappe's layout: a label of 1 or -1, then one id per field.
  WriteBytes(dir.File("train.libfm"), "1 0:1 10:1 20:1\n-1 1:1 10:1 21:1\n0 0:1\t11:1  20:1\n");
  const LibfmOptions options{3, false};
  const auto mapping = Dictionary(dir.File("train.libfm"), options);
  REQUIRE(mapping->num_tables() == 3);
  CHECK(mapping->name(0) == "field0");
  auto reader = TextReader::Open({dir.File("train.libfm")}, LibfmFormat(options), mapping, BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  CHECK((*reader)->schema().num_dense() == 0);
  const auto got = Drain(**reader, 2);
  REQUIRE(got.status.ok());
  REQUIRE(got.samples.size() == 3);
  CHECK(got.samples.labels == std::vector<float>{1, 0, 0});
  const auto& f0 = got.samples.tables[0].values;
  const auto& f1 = got.samples.tables[1].values;
  const auto& f2 = got.samples.tables[2].values;
  CHECK(f0[0] == f0[2]);  // feature 0 in field 0 twice
  CHECK(f0[0] != f0[1]);
  CHECK(f1[0] == f1[1]);  // feature 10
  CHECK(f1[0] != f1[2]);
  CHECK(f2[0] == f2[2]);
  CHECK(f2[1] != f2[0]);
}

TEST_CASE("libFM with field ids places each feature in its field; an absent field is missing", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("train.ffm"), "1 2:7:1 0:5:1\n0 1:9:1 0:5:1 2:8:1\n");
  const LibfmOptions options{3, true};
  const auto mapping = Dictionary(dir.File("train.ffm"), options);
  auto reader = TextReader::Open({dir.File("train.ffm")}, LibfmFormat(options), mapping, BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  const auto got = Drain(**reader);
  REQUIRE(got.status.ok());
  REQUIRE(got.samples.size() == 2);
  const auto& f0 = got.samples.tables[0].values;
  const auto& f1 = got.samples.tables[1].values;
  CHECK(f0[0] == f0[1]);                      // feature 5 of field 0 in both
  CHECK(f1[0] == kMissingRow);  // field 1 absent from the first line: the missing row
  CHECK(f1[1] != f1[0]);
}

TEST_CASE("libFM bad records name the line, the feature and what was expected", "[data]") {
  ScratchDir dir;
  const LibfmOptions positional{3, false}, with_fields{3, true};
  struct Case {
    const char* line;
    LibfmOptions options;
    const char* reason;
    const char* detail;
  };
  const Case cases[] = {
      {"1 0:1 10:1\n", positional, "wrong column count", "expected a label and 3 features (dataset.libfm.fields), found 2"},
      {"x 0:1 10:1 20:1\n", positional, "unknown label value", "the label is 'x', expected a number"},
      {"1 0:1 10:0.5 20:1\n", positional, "bad libfm value", "feature 2 is '10:0.5': its value must be 1"},
      {"1 0:1 10 20:1\n", positional, "bad libfm feature", "feature 2 is '10', expected feature:value"},
      {"1 0:1 :1 20:1\n", positional, "bad libfm feature", "feature 2 is ':1': no feature id"},
      {"1 3:7:1\n", with_fields, "bad libfm field", "the field must be an integer in [0, 3)"},
      {"1 0:7:1 0:8:1\n", with_fields, "repeated libfm field", "field 0 appears twice"},
      {"1 7:1\n", with_fields, "bad libfm feature", "expected field:feature:value"},
      {"1 0:1:1 1:1:1 2:1:1 2:2:1\n", with_fields, "wrong column count", "at most 3 features"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    // A good line first, so that the mapping builds; the bad one second.
    WriteBytes(dir.File("bad.libfm"), std::string(c.options.field_ids ? "1 0:1:1\n" : "1 0:1 10:1 20:1\n") + c.line);
    auto mapping = CategoricalMapping::Hashing({{"field0", 100}, {"field1", 100}, {"field2", 100}});
    REQUIRE(mapping.ok());
    auto shared = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
    auto skip = TextReader::Open({dir.File("bad.libfm")}, LibfmFormat(c.options), shared, BadRecordPolicy::kSkip);
    REQUIRE(skip.ok());
    const auto got = Drain(**skip);
    REQUIRE(got.status.ok());
    CHECK(got.samples.size() == 1);
    CHECK((*skip)->bad_records().by_reason.at(c.reason) == 1);
    CHECK_THAT((*skip)->bad_records().first, Catch::StartsWith(dir.File("bad.libfm") + ":2: " + c.reason + ": "));
    CHECK_THAT((*skip)->bad_records().first, Catch::Contains(c.detail));
  }
}

}  // namespace
}  // namespace actorrec::data::readers
