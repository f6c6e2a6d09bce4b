// Byte counts for people; see byte_units.hpp.
#include "base/byte_units.hpp"

#include <cstdio>
#include <iterator>

namespace actorrec {

std::string DecimalBytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  size_t u = 0;
  while (bytes >= 1000 && u + 1 < std::size(units)) {
    bytes /= 1000;
    ++u;
  }
  char text[48];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace actorrec
