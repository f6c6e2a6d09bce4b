// Tests of LineSource: chunk boundaries, carry-over, limits and endings.
#include "data/readers/line_source.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::ScratchDir;
using testing::WriteBytes;

// Every line of `source`, each numbered as the count so far.
std::vector<std::string> AllLines(LineSource& source) {
  size_t count = 0;
  return testing::ReadAllLines(source, [&](std::string text) {
    CHECK(source.line_number() == ++count);
    return text;
  });
}

TEST_CASE("LineSource returns the same lines as a plain split whatever the chunk size", "[data]") {
  const uint64_t seed = GENERATE(take(20, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  std::vector<std::string> want;
  std::string text;
  const size_t n = rng() % 200;
  for (size_t i = 0; i < n; ++i) {
    std::string line(rng() % 40, 'a');
    for (char& c : line) c = static_cast<char>('a' + rng() % 26);
    want.push_back(line);
    text += line + "\n";
  }
  const bool trailing_newline = rng() % 2 == 0;
  if (!trailing_newline && !text.empty() && !want.back().empty()) text.pop_back();
  if (text.empty()) {
    text = std::string("x");  // not = "x": g++ 12 warns falsely (-Wrestrict)
    want = {"x"};
  }
  ScratchDir dir;
  WriteBytes(dir.File("t.txt"), text);
  const size_t chunk = 1 + rng() % 64;
  auto source = LineSource::Open(dir.File("t.txt"), chunk, 64);
  REQUIRE(source.ok());
  CHECK(AllLines(*source) == want);
}

TEST_CASE("LineSource reads a last line without a newline and drops a CR before LF", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("t.txt"), "a\r\nb\nlast");
  auto source = LineSource::Open(dir.File("t.txt"));
  REQUIRE(source.ok());
  CHECK(AllLines(*source) == std::vector<std::string>{"a", "b", "last"});
}

TEST_CASE("LineSource reports a line over the limit once and goes on with the next", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("t.txt"), "ok\n" + std::string(100, 'x') + "\nafter\n" + std::string(30, 'y'));
  SECTION("with small chunks") {
    auto source = LineSource::Open(dir.File("t.txt"), 8, 20);
    REQUIRE(source.ok());
    CHECK(AllLines(*source) == std::vector<std::string>{"ok", "<too long>", "after", "<too long>"});
  }
  SECTION("with a chunk that holds the whole file") {
    auto source = LineSource::Open(dir.File("t.txt"), 1 << 20, 20);
    REQUIRE(source.ok());
    CHECK(AllLines(*source) == std::vector<std::string>{"ok", "<too long>", "after", "<too long>"});
  }
}

TEST_CASE("LineSource refuses an empty file and a missing one, naming them", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("empty.txt"), "");
  auto empty = LineSource::Open(dir.File("empty.txt"));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message() == dir.File("empty.txt") + ": file is empty");
  auto missing = LineSource::Open(dir.File("missing.txt"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kIoError);
  CHECK_THAT(missing.status().message(), Catch::Contains(dir.File("missing.txt")));
}

}  // namespace
}  // namespace actorrec::data::readers
