// Schema CSV/TSV: any delimited text file described by a plain options
// struct (from the config): separator, header or column names, the label
// column and its values, dense and categorical columns, missing marker.
// Columns the schema does not name are ignored. Quoted fields are not
// supported. Categorical values are keyed by their XXH3 (see categorical.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/readers/dense_transform.hpp"
#include "data/readers/text_format.hpp"

namespace actorrec::data::readers {

struct CsvSchema {
  std::string separator = ",";  // one or more characters: ",", ", ", "\t"
  bool has_header = false;
  // Required without a header. With one, if given, the header must equal it.
  std::vector<std::string> column_names;
  std::string label_column;
  // Label values, compared after trimming. Any other value (including the
  // missing marker) is a bad record "unknown label value".
  std::vector<std::string> positive_labels;
  std::vector<std::string> negative_labels;
  std::vector<std::string> dense_columns;
  DenseTransform dense_transform = DenseTransform::kNone;
  std::vector<std::string> categorical_columns;  // one table each, same names
  // A value meaning "missing" besides the empty field (e.g. "?" in Adult).
  // Missing dense values read as 0, missing categorical values as row 0.
  std::string missing_marker;
  bool trim_spaces = true;     // strip spaces and tabs around every field
  std::string comment_prefix;  // lines starting with it are not records
};

// Checks the schema (label and columns named, no column used twice, label
// values given and disjoint, columns present in column_names).
Result<std::unique_ptr<TextFormat>> CsvSchemaFormat(CsvSchema schema);

// UCI Adult (adult.data / adult.test): 15 columns, no header, label
// income with ">50K" / ">50K." positive (the test split adds the dot),
// 6 dense and 8 categorical columns, "?" missing, "|" comment lines (some
// copies of adult.test open with "|1x3 Cross validator").
CsvSchema AdultCsvSchema();

}  // namespace actorrec::data::readers
