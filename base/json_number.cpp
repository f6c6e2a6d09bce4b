// JSON numbers.
#include "base/json_number.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

namespace actorrec {

std::string JsonNumber(double x) {
  if (!std::isfinite(x)) return "null";
  for (int digits = 6; digits <= 17; ++digits) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
    if (std::strtod(buffer, nullptr) == x) return buffer;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

std::ostream& operator<<(std::ostream& out, JsonNum n) {
  if (!std::isfinite(n.x)) return out << "null";
  return out << n.x;
}

}  // namespace actorrec
