// Field splitting and number parsing shared by the text readers.
//
// Everything here works on string_views into the line buffer and allocates
// nothing per field: the readers call these once per field of every line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace actorrec::data::readers {

// Longest accepted field. The longest real categorical value we know of is
// an Avazu id of 20 bytes; 64 KiB of one field means a broken separator.
inline constexpr size_t kMaxFieldBytes = size_t{64} << 10;

// Splits `line` at every occurrence of `sep` (one or more characters) into
// *fields (cleared first). Stops once more than `max_fields` fields are
// found, so a wrong column count costs no more than a right one; the caller
// compares fields->size() with what it expects. Quoting is not supported:
// none of the formats we read quotes its fields.
void SplitFields(std::string_view line, std::string_view sep, size_t max_fields, std::vector<std::string_view>* fields);

// Without leading and trailing spaces and tabs.
std::string_view TrimSpaces(std::string_view s);

// `s` in single quotes for a message, cut to 64 bytes ("...") so that a
// garbage field cannot flood a log, its bytes that are not printable as \xNN
// (base/printable.hpp).
std::string Quoted(std::string_view s);

// prefix followed by n ("I13"). Built by append because g++ 12 at -O3
// warns falsely (-Wrestrict) on "I" + std::to_string(n).
std::string Numbered(std::string_view prefix, size_t n);

// The index of the first field longer than kMaxFieldBytes, or -1.
long FindOverlongField(const std::vector<std::string_view>& fields);

// A whole-field decimal integer (optional '-' or '+'). False if empty, not a
// number, trailing garbage or out of range.
bool ParseInt64(std::string_view s, int64_t* out);

// A whole-field finite decimal floating-point number ("3", "-2.5", "1e3").
bool ParseDouble(std::string_view s, double* out);

// 1 to 8 hex digits, either case, as a 32-bit value (Criteo's categorical
// values). Hand-written because from_chars would also accept a sign-less
// prefix of a longer field and we want "bad hex" on any non-hex byte.
bool ParseHex32(std::string_view s, uint32_t* out);

}  // namespace actorrec::data::readers
