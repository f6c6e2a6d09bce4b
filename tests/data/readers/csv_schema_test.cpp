// Tests of the schema-driven CSV/TSV reader on small files.
#include "data/readers/csv_schema.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

CsvSchema ShopSchema() {
  CsvSchema s;
  s.separator = "\t";
  s.has_header = true;
  s.label_column = "bought";
  s.positive_labels = {"yes"};
  s.negative_labels = {"no"};
  s.dense_columns = {"price", "views"};
  s.dense_transform = DenseTransform::kLog1p;
  s.categorical_columns = {"shop", "color"};
  s.missing_marker = "NA";
  return s;
}

struct Opened {
  std::unique_ptr<TextReader> reader;
  std::shared_ptr<const CategoricalMapping> mapping;
};

Opened Open(const CsvSchema& schema, const std::vector<std::string>& paths, BadRecordPolicy policy) {
  auto format = CsvSchemaFormat(schema);
  REQUIRE(format.ok());
  auto mapping = BuildMapping(paths, format->get(), DictionarySpecs(**format, 1), policy);
  REQUIRE(mapping.ok());
  Opened o;
  o.mapping = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
  auto again = CsvSchemaFormat(schema);
  REQUIRE(again.ok());
  auto reader = TextReader::Open(paths, std::move(again).value(), o.mapping, policy);
  REQUIRE(reader.ok());
  o.reader = std::move(reader).value();
  return o;
}

TEST_CASE("A schema CSV with a header reads labels, transformed dense and categorical columns", "[data]") {
  ScratchDir dir;
  // Columns in another order than the schema lists them, one unused (id).
  WriteBytes(dir.File("shop.tsv"),
             "id\tcolor\tprice\tbought\tshop\tviews\n"
             "1\tred\t9\tyes\tA\t0\n"
             "2\t NA \t-5\tno\tB\tNA\n"
             "3\tred\t\tno\tA\t2.5\n");
  auto o = Open(ShopSchema(), {dir.File("shop.tsv")}, BadRecordPolicy::kFail);
  CHECK(o.reader->schema().dense_names == std::vector<std::string>{"price", "views"});
  CHECK(o.reader->schema().tables[0].name == "shop");
  CHECK(o.reader->schema().tables[0].rows == 4);  // missing, rare, A, B
  const auto got = Drain(*o.reader);
  REQUIRE(got.status.ok());
  CHECK(got.samples.labels == std::vector<float>{1, 0, 0});
  CHECK(got.samples.dense == std::vector<float>{static_cast<float>(std::log1p(9.0)), 0.0f, 0.0f, 0.0f, 0.0f,
                                                static_cast<float>(std::log1p(2.5))});
  CHECK(got.samples.tables[0].values == std::vector<RowId>{2, 3, 2});            // A twice, then B
  CHECK(got.samples.tables[1].values == std::vector<RowId>{2, kMissingRow, 2});  // "NA" trimmed is missing
}

TEST_CASE("A schema CSV without a header takes column names, a multi-character separator and comments", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("a.csv"), "|a comment line\nx, 1, p\ny, 2, n\n");
  CsvSchema s;
  s.separator = ", ";
  s.column_names = {"c", "d", "label"};
  s.label_column = "label";
  s.positive_labels = {"p"};
  s.negative_labels = {"n"};
  s.dense_columns = {"d"};
  s.categorical_columns = {"c"};
  s.comment_prefix = std::string("|");  // not = "|": g++ 12 warns falsely (-Wrestrict)
  s.trim_spaces = false;
  auto o = Open(s, {dir.File("a.csv")}, BadRecordPolicy::kFail);
  const auto got = Drain(*o.reader);
  REQUIRE(got.status.ok());
  CHECK(got.samples.labels == std::vector<float>{1, 0});
  CHECK(got.samples.dense == std::vector<float>{1, 2});
  // x and y are seen once each: rows 2 and 3 in key order, either way round.
  const auto& c = got.samples.tables[0].values;
  CHECK(((c[0] == 2 && c[1] == 3) || (c[0] == 3 && c[1] == 2)));
}

TEST_CASE("A schema CSV refuses inconsistent schemas before reading", "[data]") {
  CsvSchema s = ShopSchema();
  SECTION("a column used twice") {
    s.categorical_columns.push_back("price");
    CHECK_THAT(CsvSchemaFormat(s).status().message(), Catch::Contains("'price' is used twice"));
  }
  SECTION("a label value both positive and negative") {
    s.negative_labels.push_back("yes");
    CHECK_FALSE(CsvSchemaFormat(s).ok());
  }
  SECTION("no negative label values") {
    s.negative_labels.clear();
    CHECK_FALSE(CsvSchemaFormat(s).ok());
  }
  SECTION("no header and no column names") {
    s.has_header = false;
    CHECK_FALSE(CsvSchemaFormat(s).ok());
  }
  SECTION("a column the column names lack") {
    s.has_header = false;
    s.column_names = {"bought", "price", "views", "shop"};
    CHECK(CsvSchemaFormat(s).status().message() == "csv schema: no column 'color'");
  }
}

TEST_CASE("A schema CSV names the file when its header lacks a schema column or differs between files", "[data]") {
  ScratchDir dir;
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  auto format = CsvSchemaFormat(ShopSchema());
  REQUIRE(format.ok());
  auto mapping = CategoricalMapping::Hashing({{"shop", 10}, {"color", 10}});
  REQUIRE(mapping.ok());
  auto shared = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
  SECTION("a missing column") {
    WriteBytes(dir.File("s.tsv"), "bought\tprice\tviews\tshop\nyes\t1\t1\tA\n");
    auto reader = TextReader::Open({dir.File("s.tsv")}, std::move(format).value(), shared, policy);
    REQUIRE(reader.ok());
    CHECK(Drain(**reader).status.message() ==
          dir.File("s.tsv") + ":1: schema does not match the file: no column 'color'");
  }
  SECTION("a second file with another header") {
    WriteBytes(dir.File("1.tsv"), "bought\tprice\tviews\tshop\tcolor\nyes\t1\t1\tA\tred\n");
    WriteBytes(dir.File("2.tsv"), "bought\tprice\tviews\tcolor\tshop\nyes\t1\t1\tred\tA\n");
    auto reader = TextReader::Open({dir.File("1.tsv"), dir.File("2.tsv")}, std::move(format).value(), shared, policy);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    CHECK(got.status.message() == dir.File("2.tsv") + ":1: header mismatch: column 4 is 'color', expected 'shop'");
  }
}

}  // namespace
}  // namespace actorrec::data::readers
