// User text in a message: a config value or key, a data field, a header
// name. Such text can hold any bytes (a NUL, an escape sequence that drives
// the terminal, a byte of another encoding), and a message must show them
// without printing them raw.
#pragma once

#include <string>
#include <string_view>

namespace actorrec {

// `text` with every byte that is not printable written as \xNN: control
// characters (below 0x20, 0x7f, and U+0080..U+009F), and bytes that are not
// part of well-formed UTF-8. Printable ASCII and other well-formed UTF-8 stay
// as they are, so names in any language read normally. A backslash becomes
// \\, and so does `quote` (\"), when given, so that the escaping reads back
// unambiguously inside that quote.
std::string Printable(std::string_view text, char quote = '\0');

}  // namespace actorrec
