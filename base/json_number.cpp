// JSON numbers and strings.
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

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

std::optional<double> NumberField(std::string_view line, std::string_view key) {
  // Appends only: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "\"" + std::string(…).
  std::string needle = "\"";
  needle.append(key).append("\":");
  const size_t at = line.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string rest(line.substr(at + needle.size(), 32));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return v;
}

}  // namespace actorrec
