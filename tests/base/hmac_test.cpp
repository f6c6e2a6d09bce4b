// HMAC-SHA256, digests and hex: checked against published test vectors.
#include "base/digest.hpp"
#include "base/hmac.hpp"

#include <catch2/catch.hpp>

using namespace actorrec;

TEST_CASE("HMAC-SHA256 matches RFC 4231 test case 2", "[base]") {
  REQUIRE(ToHex(HmacSha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("digest comparison accepts only identical digests", "[base]") {
  auto a = HmacSha256("secret-one", "nonce|member");
  auto b = HmacSha256("secret-two", "nonce|member");
  REQUIRE(DigestEquals(a, a));
  REQUIRE_FALSE(DigestEquals(a, b));
  REQUIRE_FALSE(DigestEquals(a, a.substr(0, 31)));
}

TEST_CASE("random nonces have the requested length and differ", "[base]") {
  auto a = RandomBytes(16), b = RandomBytes(16);
  REQUIRE(a.size() == 16);
  REQUIRE(a != b);
}

TEST_CASE("XXH3-64 digests are stable across builds", "[base]") {
  // XXH3_64bits("") with seed 0, from xxhash's own sanity checks.
  REQUIRE(Digest64("") == 0x2D06800538D394C2ULL);
  REQUIRE(Digest64Hex("") == "2d06800538d394c2");
}
