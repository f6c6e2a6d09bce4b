// Status and Result: values that explain failures.
#include "base/status.hpp"

#include <catch2/catch.hpp>

using actorrec::Result;
using actorrec::Status;

TEST_CASE("an ok status has no message and prints as ok", "[base]") {
  Status s;
  REQUIRE(s.ok());
  REQUIRE(s.ToString() == "ok");
}

TEST_CASE("an error status keeps its code and names it when printed", "[base]") {
  auto s = Status::Corruption("chunk 3 of data.bin: checksum mismatch");
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.code() == Status::Code::kCorruption);
  REQUIRE(s.ToString() == "corruption: chunk 3 of data.bin: checksum mismatch");
}

TEST_CASE("a result holds either a value or the status that explains its absence", "[base]") {
  Result<int> good = 7;
  REQUIRE(good.ok());
  REQUIRE(*good == 7);
  REQUIRE(good.status().ok());
  Result<int> bad = Status::NotFound("no such member 'c'");
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.status().code() == Status::Code::kNotFound);
}
