// Tests of field splitting and number parsing.
#include "data/readers/fields.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <charconv>
#include <random>
#include <string>
#include <vector>

namespace actorrec::data::readers {
namespace {

std::vector<std::string> Split(std::string_view line, std::string_view sep, size_t max_fields = 100) {
  std::vector<std::string_view> fields;
  SplitFields(line, sep, max_fields, &fields);
  return {fields.begin(), fields.end()};
}

TEST_CASE("SplitFields splits at one-character and multi-character separators", "[data]") {
  CHECK(Split("a\tb\t\tc", "\t") == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(Split("", ",") == std::vector<std::string>{""});
  CHECK(Split(",", ",") == std::vector<std::string>{"", ""});
  CHECK(Split("39, State-gov, 77516", ", ") == std::vector<std::string>{"39", "State-gov", "77516"});
  CHECK(Split("a, b,c", ", ") == std::vector<std::string>{"a", "b,c"});
}

TEST_CASE("SplitFields stops just past max_fields so a long line costs no more", "[data]") {
  CHECK(Split("a,b,c,d,e", ",", 2).size() == 3);
  CHECK(Split("a,b", ",", 2).size() == 2);
}

TEST_CASE("ParseHex32 takes 1 to 8 hex digits of either case and nothing else", "[data]") {
  uint32_t v = 0;
  CHECK((ParseHex32("68fd1e64", &v) && v == 0x68fd1e64u));
  CHECK((ParseHex32("FFFFFFFF", &v) && v == 0xffffffffu));
  CHECK((ParseHex32("0", &v) && v == 0));
  CHECK_FALSE(ParseHex32("", &v));
  CHECK_FALSE(ParseHex32("123456789", &v));
  CHECK_FALSE(ParseHex32("68fd1e6g", &v));
  CHECK_FALSE(ParseHex32(" 8fd1e64", &v));
  CHECK_FALSE(ParseHex32("-1", &v));
}

TEST_CASE("ParseHex32's 8-digit fast path agrees with a from_chars model on random bytes", "[data]") {
  const uint64_t seed = GENERATE(take(5, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  const std::string alphabet = "0123456789abcdefABCDEFgG@`/:\x7f\x80\xff \t";
  for (int i = 0; i < 20000; ++i) {
    std::string s(8, '0');
    for (char& c : s) c = rng() % 8 == 0 ? alphabet[rng() % alphabet.size()] : alphabet[rng() % 22];
    bool hex = true;
    for (char c : s) hex = hex && std::isxdigit(static_cast<unsigned char>(c));
    uint32_t want = 0;
    if (hex) std::from_chars(s.data(), s.data() + 8, want, 16);
    uint32_t got = 0;
    const bool ok = ParseHex32(s, &got);
    REQUIRE(ok == hex);
    if (hex) REQUIRE(got == want);
  }
}

TEST_CASE("ParseInt64 and ParseDouble accept whole finite numbers only", "[data]") {
  int64_t i = 0;
  CHECK((ParseInt64("-2", &i) && i == -2));
  CHECK((ParseInt64("+7", &i) && i == 7));
  CHECK_FALSE(ParseInt64("1.5", &i));
  CHECK_FALSE(ParseInt64("12a", &i));
  CHECK_FALSE(ParseInt64("", &i));
  CHECK_FALSE(ParseInt64("99999999999999999999", &i));
  double d = 0;
  CHECK((ParseDouble("2.5e1", &d) && d == 25.0));
  CHECK((ParseDouble("-3", &d) && d == -3.0));
  CHECK_FALSE(ParseDouble("nan", &d));
  CHECK_FALSE(ParseDouble("inf", &d));
  CHECK_FALSE(ParseDouble("1,5", &d));
}

TEST_CASE("ParseInt64 and ParseDouble take one sign at most, and nothing around the number", "[data]") {
  int64_t i = 7;
  double d = 7;
  for (const char* odd : {"+-2", "-+2", "--2", "++2", "+ 2", "- 2", " 2", "2 ", "+", "-", "2-", "0x10", "+-0"}) {
    INFO(odd);
    CHECK_FALSE(ParseInt64(odd, &i));
    CHECK_FALSE(ParseDouble(odd, &d));
  }
  CHECK_FALSE(ParseInt64("9223372036854775808", &i));
  CHECK((ParseInt64("-9223372036854775808", &i) && i == INT64_MIN));
  CHECK((ParseInt64("+0", &i) && i == 0));
  CHECK_FALSE(ParseDouble("+-2.5", &d));
  CHECK_FALSE(ParseDouble("1e999", &d));
  CHECK((ParseDouble("+2.5", &d) && d == 2.5));
}

TEST_CASE("TrimSpaces, Quoted and FindOverlongField shape messages and limits", "[data]") {
  CHECK(TrimSpaces(" \t x y \t") == "x y");
  CHECK(Quoted("ab") == "'ab'");
  CHECK(Quoted(std::string(100, 'x')) == "'" + std::string(64, 'x') + "...'");
  // A field's raw bytes never reach a message: NUL, escape, a Latin-1 byte.
  CHECK(Quoted(std::string("a\0b\x1b[2J\xe9'", 9)) == "'a\\x00b\\x1b[2J\\xe9\\''");
  const std::string big(kMaxFieldBytes + 1, 'x');
  CHECK(FindOverlongField({"a", "b"}) == -1);
  CHECK(FindOverlongField({"a", big}) == 1);
}

}  // namespace
}  // namespace actorrec::data::readers
