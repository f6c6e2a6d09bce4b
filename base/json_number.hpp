// Numbers in JSON output: JSON has no NaN or infinity, so a non-finite
// number is written as null, never as a bare `nan` that no parser reads.
#pragma once

#include <iosfwd>
#include <string>

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

}  // namespace actorrec
