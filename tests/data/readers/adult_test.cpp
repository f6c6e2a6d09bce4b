// The schema CSV reader on the real UCI Adult data in datasets/adult.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "data/readers/csv_schema.hpp"
#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::DatasetFile;

// Non-blank, non-comment lines, counted the plain way (what `wc -l` shows,
// plus a last line without a newline).
size_t CountRecords(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '|' && line.find_first_not_of(" \r") != std::string::npos) ++n;
  }
  return n;
}

std::unique_ptr<TextFormat> AdultFormat() {
  auto format = CsvSchemaFormat(AdultCsvSchema());
  REQUIRE(format.ok());
  return std::move(format).value();
}

TEST_CASE("The Adult splits read completely and the train dictionary maps the test split", "[data]") {
  const std::string train = DatasetFile("adult/adult.data");
  const std::string test = DatasetFile("adult/adult.test");
  // The published sizes; the line counts check the copies at hand agree.
  REQUIRE(CountRecords(train) == 32561);
  REQUIRE(CountRecords(test) == 16281);

  auto format = AdultFormat();
  auto mapping = BuildMapping({train}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kFail);
  REQUIRE(mapping.ok());
  ScratchDir dir;
  REQUIRE(mapping->Save(dir.File("adult.map")).ok());
  // Evaluation maps through the saved mapping, as a later run would.
  auto loaded = CategoricalMapping::Load(dir.File("adult.map"));
  REQUIRE(loaded.ok());
  auto shared = std::make_shared<const CategoricalMapping>(std::move(loaded).value());
  CHECK(shared->rows(1) == 2 + 16);  // education: 16 values, none missing
  CHECK(shared->rows(6) == 2 + 2);   // sex
  CHECK(shared->rows(0) == 2 + 8);   // workclass: 8 values besides "?"

  auto train_reader = TextReader::Open({train}, AdultFormat(), shared, BadRecordPolicy::kFail);
  REQUIRE(train_reader.ok());
  const auto tr = Drain(**train_reader, 1000);
  REQUIRE(tr.status.ok());
  REQUIRE(tr.samples.size() == 32561);
  const double positives = std::accumulate(tr.samples.labels.begin(), tr.samples.labels.end(), 0.0);
  CHECK(positives == 7841);  // grep -c '>50K': 24.08 %
  CHECK(positives / 32561 == Approx(0.241).margin(0.001));
  // The first record: 39, State-gov, 77516, Bachelors, 13, ... , 2174, 0, 40, ...
  CHECK(tr.samples.dense[0] == 39.0f);
  CHECK(tr.samples.dense[1] == 77516.0f);
  CHECK(tr.samples.dense[3] == 2174.0f);
  // "?" is missing: workclass has missing values, none maps to the rare row
  // because every train value has a dictionary row.
  const auto& workclass = tr.samples.tables[0].values;
  CHECK(std::count(workclass.begin(), workclass.end(), kMissingRow) == 1836);
  CHECK(std::count(workclass.begin(), workclass.end(), kRareRow) == 0);

  auto test_reader = TextReader::Open({test}, AdultFormat(), shared, BadRecordPolicy::kFail);
  REQUIRE(test_reader.ok());
  const auto te = Drain(**test_reader, 1000);
  REQUIRE(te.status.ok());
  REQUIRE(te.samples.size() == 16281);
  const double test_positives = std::accumulate(te.samples.labels.begin(), te.samples.labels.end(), 0.0);
  CHECK(test_positives == 3846);  // 23.62 %
  // Every categorical value of the test split also occurs in train (checked
  // with comm(1) on the files), so none may fall to the rare row.
  for (size_t t = 0; t < te.samples.tables.size(); ++t) {
    const auto& v = te.samples.tables[t].values;
    CHECK(std::count(v.begin(), v.end(), kRareRow) == 0);
  }
  CHECK(te.samples.tables[1].values.front() == shared->Map(1, KeyOfString("11th")));
}

TEST_CASE("The Adult schema reads a copy of the test split that opens with a comment and ends in blank lines",
          "[data]") {
  ScratchDir dir;
  std::string text = testing::ReadBytes(DatasetFile("adult/adult.test"));
  text = "|1x3 Cross validator\n" + text + "\n\n\n";
  testing::WriteBytes(dir.File("adult.test"), text);
  auto format = AdultFormat();
  auto mapping =
      BuildMapping({dir.File("adult.test")}, format.get(), DictionarySpecs(*format, 1), BadRecordPolicy::kFail);
  REQUIRE(mapping.ok());
  auto reader =
      TextReader::Open({dir.File("adult.test")}, AdultFormat(),
                       std::make_shared<const CategoricalMapping>(std::move(mapping).value()), BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  const auto got = Drain(**reader, 4096);
  REQUIRE(got.status.ok());
  CHECK(got.samples.size() == 16281);
  CHECK((*reader)->bad_records().skipped == 0);
}

}  // namespace
}  // namespace actorrec::data::readers
