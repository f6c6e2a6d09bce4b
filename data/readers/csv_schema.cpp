// Schema-driven CSV/TSV parsing.
#include "data/readers/csv_schema.hpp"

#include <algorithm>
#include <set>

#include "data/readers/fields.hpp"

namespace actorrec::data::readers {
namespace {

constexpr size_t kNoColumn = ~size_t{0};

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

class CsvSchemaText final : public TextFormat {
 public:
  explicit CsvSchemaText(CsvSchema schema) : schema_(std::move(schema)) {}

  // Column indices from `names`; an error, prefixed by `where`, names the
  // missing column.
  Status Resolve(const std::vector<std::string>& names, const std::string& where) {
    const auto index = [&](const std::string& column, size_t* at) -> Status {
      const auto it = std::find(names.begin(), names.end(), column);
      if (it == names.end()) {
        return Status::InvalidArgument(where + "no column '" + column + "'");
      }
      *at = static_cast<size_t>(it - names.begin());
      return Status::Ok();
    };
    num_columns_ = names.size();
    if (Status s = index(schema_.label_column, &label_at_); !s.ok()) return s;
    dense_at_.assign(schema_.dense_columns.size(), kNoColumn);
    for (size_t j = 0; j < dense_at_.size(); ++j) {
      if (Status s = index(schema_.dense_columns[j], &dense_at_[j]); !s.ok()) return s;
    }
    table_at_.assign(schema_.categorical_columns.size(), kNoColumn);
    for (size_t t = 0; t < table_at_.size(); ++t) {
      if (Status s = index(schema_.categorical_columns[t], &table_at_[t]); !s.ok()) return s;
    }
    return Status::Ok();
  }

  const std::vector<std::string>& dense_names() const override { return schema_.dense_columns; }
  const std::vector<std::string>& table_names() const override { return schema_.categorical_columns; }
  bool has_header() const override { return schema_.has_header; }
  bool IsComment(std::string_view line) const override {
    return !schema_.comment_prefix.empty() && line.starts_with(schema_.comment_prefix);
  }

  Status CheckHeader(const std::string& path, std::string_view line) override {
    SplitFields(line, schema_.separator, kMaxHeaderColumns, &fields_);
    std::vector<std::string> header;
    for (auto f : fields_) header.emplace_back(schema_.trim_spaces ? TrimSpaces(f) : f);
    // The first header read fixes the columns; later files must repeat it.
    const std::vector<std::string>& want = !schema_.column_names.empty() ? schema_.column_names : first_header_;
    if (!want.empty()) {
      for (size_t c = 0; c < want.size() && c < header.size(); ++c) {
        if (header[c] != want[c]) {
          return Status::InvalidArgument(path + ":1: header mismatch: column " + std::to_string(c + 1) + " is " +
                                         Quoted(header[c]) + ", expected " + Quoted(want[c]));
        }
      }
      if (header.size() != want.size()) {
        return Status::InvalidArgument(path + ":1: header mismatch: expected " + std::to_string(want.size()) +
                                       " columns, found " + std::to_string(header.size()));
      }
    }
    if (first_header_.empty()) first_header_ = header;
    return Resolve(header, path + ":1: schema does not match the file: ");
  }

  bool Parse(std::string_view line, RawRecord* out, RecordError* error) override {
    SplitFields(line, schema_.separator, num_columns_, &fields_);
    if (fields_.size() != num_columns_) {
      *error = {"wrong column count",
                "expected " + std::to_string(num_columns_) + " fields separated by '" + schema_.separator +
                    "', found " + (fields_.size() > num_columns_ ? "more" : std::to_string(fields_.size())),
                true};
      return false;
    }
    if (const long i = FindOverlongField(fields_); i >= 0) {
      *error = {"field too long",
                "column " + std::to_string(i + 1) + " is longer than " + std::to_string(kMaxFieldBytes) + " bytes"};
      return false;
    }
    const std::string_view label = Field(label_at_);
    if (Contains(schema_.positive_labels, label)) {
      out->label = 1.0f;
    } else if (Contains(schema_.negative_labels, label)) {
      out->label = 0.0f;
    } else {
      *error = {"unknown label value",
                schema_.label_column + " is " + Quoted(label) + ", expected one of " + LabelValues()};
      return false;
    }
    for (size_t j = 0; j < dense_at_.size(); ++j) {
      const std::string_view f = Field(dense_at_[j]);
      double v = 0;
      if (IsMissing(f)) {
        out->dense[j] = 0.0f;
      } else if (ParseDouble(f, &v)) {
        out->dense[j] = ApplyDense(schema_.dense_transform, v);
      } else {
        *error = {"non-numeric dense value",
                  schema_.dense_columns[j] + " is " + Quoted(f) + ", expected a number or the missing marker"};
        return false;
      }
    }
    for (size_t t = 0; t < table_at_.size(); ++t) {
      const std::string_view f = Field(table_at_[t]);
      out->present[t] = IsMissing(f) ? 0 : 1;
      if (out->present[t]) out->keys[t] = KeyOfString(f);
    }
    return true;
  }

 private:
  // A header with more columns than this is not a header.
  static constexpr size_t kMaxHeaderColumns = 100000;

  std::string_view Field(size_t at) const { return schema_.trim_spaces ? TrimSpaces(fields_[at]) : fields_[at]; }
  bool IsMissing(std::string_view f) const {
    return f.empty() || (!schema_.missing_marker.empty() && f == schema_.missing_marker);
  }
  std::string LabelValues() const {
    std::string out;
    for (const auto* values : {&schema_.positive_labels, &schema_.negative_labels}) {
      for (const auto& v : *values) out += (out.empty() ? "'" : ", '") + v + "'";
    }
    return out;
  }

  CsvSchema schema_;
  std::vector<std::string> first_header_;
  size_t num_columns_ = 0;
  size_t label_at_ = kNoColumn;
  std::vector<size_t> dense_at_;
  std::vector<size_t> table_at_;
  std::vector<std::string_view> fields_;
};

}  // namespace

Result<std::unique_ptr<TextFormat>> CsvSchemaFormat(CsvSchema schema) {
  const auto bad = [](const std::string& why) { return Status::InvalidArgument("csv schema: " + why); };
  if (schema.separator.empty()) return bad("the separator is empty");
  if (schema.label_column.empty()) return bad("no label column");
  if (schema.positive_labels.empty() || schema.negative_labels.empty()) {
    return bad("both positive and negative label values are needed (any other value is a bad record)");
  }
  for (const auto& v : schema.positive_labels) {
    if (Contains(schema.negative_labels, v)) return bad("label value '" + v + "' is both positive and negative");
  }
  std::set<std::string> used = {schema.label_column};
  for (const auto* columns : {&schema.dense_columns, &schema.categorical_columns}) {
    for (const auto& c : *columns) {
      if (!used.insert(c).second) return bad("column '" + c + "' is used twice");
    }
  }
  if (!schema.has_header && schema.column_names.empty()) return bad("no header and no column names");
  std::set<std::string> names(schema.column_names.begin(), schema.column_names.end());
  if (names.size() != schema.column_names.size()) return bad("a column name appears twice");
  const std::vector<std::string> column_names = schema.column_names;
  auto format = std::make_unique<CsvSchemaText>(std::move(schema));
  // Named columns resolve now, so a schema naming an absent column fails
  // before any file is opened; with only a header, CheckHeader resolves.
  if (!column_names.empty()) {
    if (Status s = format->Resolve(column_names, "csv schema: "); !s.ok()) return s;
  }
  return std::unique_ptr<TextFormat>(std::move(format));
}

CsvSchema AdultCsvSchema() {
  CsvSchema s;
  s.separator = ",";  // the files use ", "; splitting at ',' and trimming also reads copies without the space
  s.column_names = {
      "age",          "workclass", "fnlwgt", "education",    "education-num", "marital-status", "occupation",
      "relationship", "race",      "sex",    "capital-gain", "capital-loss",  "hours-per-week", "native-country",
      "income"};
  s.label_column = "income";
  s.positive_labels = {">50K", ">50K."};
  s.negative_labels = {"<=50K", "<=50K."};
  s.dense_columns = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"};
  s.categorical_columns = {"workclass", "education", "marital-status", "occupation", "relationship",
                           "race",      "sex",       "native-country"};
  // Move-assigned temporaries: g++ 12 warns falsely (-Wrestrict) on
  // assigning one-character literals here.
  s.missing_marker = std::string("?");
  s.comment_prefix = std::string("|");
  return s;
}

}  // namespace actorrec::data::readers
