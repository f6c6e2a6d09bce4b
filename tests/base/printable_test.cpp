// Printable: user text in messages, with every byte that is not printable
// escaped and well-formed UTF-8 kept.
#include "base/printable.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace actorrec {
namespace {

TEST_CASE("Printable escapes control characters and bytes that are not UTF-8", "[base]") {
  CHECK(Printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(Printable("\x1b[2J\x7f\t\n") == "\\x1b[2J\\x7f\\x09\\x0a");
  CHECK(Printable("caf\xe9") == "caf\\xe9");                // Latin-1, not UTF-8
  CHECK(Printable("\xc0\xaf") == "\\xc0\\xaf");             // an overlong '/'
  CHECK(Printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");    // a surrogate
  CHECK(Printable("\xe2\x82") == "\\xe2\\x82");             // cut short
  CHECK(Printable("\xc2\x9b") == "\\xc2\\x9b");             // C1 control (CSI)
}

TEST_CASE("Printable keeps printable UTF-8 and escapes backslashes and the quote", "[base]") {
  CHECK(Printable("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82") == "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82");
  CHECK(Printable("a\\x00") == "a\\\\x00");  // an escape in the text stays distinguishable from ours
  CHECK(Printable("say \"hi\"", '"') == "say \\\"hi\\\"");
  CHECK(Printable("say \"hi\"") == "say \"hi\"");
}

}  // namespace
}  // namespace actorrec
