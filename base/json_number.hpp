// Numbers and strings in JSON output: JSON has no NaN or infinity, so a
// non-finite number is written as null, never as a bare `nan` that no parser
// reads; strings are escaped.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace actorrec {

// Shortest text that reads back as the same double (17 significant digits
// at most), or "null".
std::string JsonNumber(double x);

// For JSON written through an ostream: `out << JsonNum{x}` writes x with the
// stream's own precision, or null.
struct JsonNum {
  double x;
};
std::ostream& operator<<(std::ostream& out, JsonNum n);

// Appends `s` as a JSON string, quotes included, escaped as serde_json does
// it (what Python's safetensors uses): the two-character escapes where JSON
// has them, \u00XX for other control characters, everything else (UTF-8
// included) as is.
void AppendJsonString(std::string* out, std::string_view s);
// The same, as a new string.
std::string JsonString(std::string_view s);

// Reading back our own flat JSON lines (metrics.jsonl): the number after the
// first "key": in `line`, or nothing (absent, or not a number: null, a
// string). Pass a nested object's text to search in it.
std::optional<double> NumberField(std::string_view line, std::string_view key);

}  // namespace actorrec
