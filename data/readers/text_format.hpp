// TextFormat: how one line-oriented format (Criteo TSV, Avazu CSV, a schema
// CSV) turns a line into a raw record. The RecordScanner owns everything
// the formats share (chunked reading, headers, blank lines, policies).
//
// Implementations are stateless after CheckHeader and may be used for one
// scan at a time; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/categorical.hpp"

namespace actorrec::data::readers {

// One parsed line before categorical mapping. keys[t] is meaningful only
// when present[t]; a missing value maps to kMissingRow.
struct RawRecord {
  float label = 0;
  std::vector<float> dense;  // already transformed
  std::vector<CategoryKey> keys;
  std::vector<uint8_t> present;
};

// Why a line is a bad record: `reason` is the counted key (a string
// literal), `detail` names the column and what was expected and found.
struct RecordError {
  const char* reason = "";
  std::string detail;
  // True for a wrong column count: on a file's first data line the scanner
  // reports it as a schema mismatch instead (see RecordScanner).
  bool column_count = false;
};

class TextFormat {
 public:
  virtual ~TextFormat() = default;

  virtual const std::vector<std::string>& dense_names() const = 0;
  virtual const std::vector<std::string>& table_names() const = 0;

  // Whether each file opens with a header line, given to CheckHeader.
  virtual bool has_header() const = 0;
  // Checks a file's header; a mismatch names `path` and the column.
  virtual Status CheckHeader(const std::string& path, std::string_view line) = 0;
  // Lines to ignore on purpose (e.g. a "|1x3 Cross validator" comment).
  virtual bool IsComment(std::string_view /*line*/) const { return false; }

  // Parses a data line into *out (shaped by the caller to dense_names() and
  // table_names()). On a bad record returns false and fills *error.
  virtual bool Parse(std::string_view line, RawRecord* out, RecordError* error) = 0;
};

}  // namespace actorrec::data::readers
