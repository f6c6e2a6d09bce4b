// User text in a message; see printable.hpp.
#include "base/printable.hpp"

#include <cstdint>
#include <cstdio>

namespace actorrec {

namespace {

// The length of the well-formed UTF-8 sequence of a printable character at
// the start of `s` (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF), or 0.
size_t PrintableUtf8(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const auto cont = [&](size_t i, uint8_t lo = 0x80, uint8_t hi = 0xbf) {
    return i < s.size() && byte(i) >= lo && byte(i) <= hi;
  };
  const uint8_t b = byte(0);
  if (b >= 0x20 && b < 0x7f) return 1;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) && !(b == 0xc2 && byte(1) <= 0x9f) ? 2 : 0;  // C1 controls
  if (b >= 0xe0 && b <= 0xef) {
    const bool second = b == 0xe0 ? cont(1, 0xa0) : b == 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const bool second = b == 0xf0 ? cont(1, 0x90) : b == 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string Printable(std::string_view text, char quote) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    if (text[0] == '\\' || (quote != '\0' && text[0] == quote)) {
      out += '\\';
      out += text[0];
      text.remove_prefix(1);
      continue;
    }
    if (const size_t n = PrintableUtf8(text); n > 0) {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(static_cast<uint8_t>(text[0])));
    out += escaped;
    text.remove_prefix(1);
  }
  return out;
}

}  // namespace actorrec
