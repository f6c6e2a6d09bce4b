// Tests of TextPiece: a file's pieces read every line exactly once, in
// order and with the file's line numbers, whatever the piece size; and a
// scanner over pieces gives the records, skipped records and errors of one
// over the whole file.
#include "data/readers/text_piece.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "data/readers/criteo_tsv.hpp"
#include "data/readers/line_source.hpp"
#include "data/readers/record_scanner.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::ScratchDir;
using testing::WriteBytes;

// Every line of `source` with the place a message would name.
std::vector<std::string> LinesWithPlaces(LineSource& source) {
  return testing::ReadAllLines(source, [&](std::string text) { return source.Where() + " " + text; });
}

std::string RandomText(std::mt19937_64& rng) {
  std::string text;
  const size_t n = 1 + rng() % 150;
  for (size_t i = 0; i < n; ++i) {
    std::string line(rng() % 5 == 0 ? 0 : rng() % 30, 'a');
    for (char& c : line) c = static_cast<char>('a' + rng() % 26);
    if (rng() % 7 == 0) line += '\r';
    text += line + "\n";
  }
  if (rng() % 2 == 0) text += "last line without a newline";
  return text;
}

TEST_CASE("A file's pieces read each line once, in order, named by its line in the file", "[data]") {
  const uint64_t seed = GENERATE(take(30, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.File("t.txt");
  const std::string text = RandomText(rng);
  WriteBytes(path, text);
  auto whole = LineSource::Open(path, 1 + rng() % 64);
  REQUIRE(whole.ok());
  const auto want = LinesWithPlaces(*whole);

  const uint64_t piece_bytes = 1 + rng() % (text.size() + 10);
  CAPTURE(seed, piece_bytes, text.size());
  auto pieces = SplitIntoPieces(path, piece_bytes);
  REQUIRE(pieces.ok());
  CHECK(pieces->size() == (text.size() + piece_bytes - 1) / piece_bytes);
  std::vector<std::string> got;
  for (const TextPiece& piece : *pieces) {
    auto source = LineSource::Open(piece, 1 + rng() % 64);
    REQUIRE(source.ok());
    const auto lines = LinesWithPlaces(*source);
    got.insert(got.end(), lines.begin(), lines.end());
  }
  CHECK(got == want);
}

TEST_CASE("The newline index counts the newlines before any offset", "[data]") {
  std::mt19937_64 rng(5);
  ScratchDir dir;
  const std::string text = RandomText(rng) + RandomText(rng);
  WriteBytes(dir.File("t.txt"), text);
  NewlineIndex index(dir.File("t.txt"), 1 + rng() % 50);
  for (int i = 0; i < 200; ++i) {
    const uint64_t offset = rng() % (text.size() + 1);
    CHECK(index.Before(offset) == static_cast<uint64_t>(std::count(text.begin(), text.begin() + offset, '\n')));
  }
  NewlineIndex gone(dir.File("missing.txt"), 8);
  CHECK_FALSE(gone.Before(20).has_value());
}

TEST_CASE("A small or compressed file is one piece", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("small.txt"), "a\nb\n");
  auto small = SplitIntoPieces(dir.File("small.txt"), 4);
  REQUIRE(small.ok());
  REQUIRE(small->size() == 1);
  CHECK((small->front().first() && small->front().last()));
  // A gzip member of "a\nb\n" (gzip -n): can be read only from its start.
  const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b, 0xe4,
                              0x4a, 0xe2, 0x02, 0x00, 0x0b, 0xe7, 0x27, 0xa3, 0x04, 0x00, 0x00, 0x00};
  WriteBytes(dir.File("t.gz"), std::string(reinterpret_cast<const char*>(gz), sizeof gz));
  auto packed = SplitIntoPieces(dir.File("t.gz"), 1);
  REQUIRE(packed.ok());
  CHECK(packed->size() == 1);
  auto missing = SplitIntoPieces(dir.File("missing.txt"), 1);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("missing.txt"));
}

// Criteo lines with blank lines, bad lines and comments-free noise mixed in.
std::string CriteoTextWithFaults(std::mt19937_64& rng) {
  std::string text;
  const size_t n = 5 + rng() % 60;
  for (size_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(rng() % 12);
    if (kind == 0 && i > 0) {
      text += "\n";  // a blank line: bad before more data, ignored at the end
    } else if (kind == 1 && i > 0) {
      text += "1\t2\tthree columns only\n";
    } else {
      std::string line = std::to_string(rng() % 2);
      for (size_t d = 0; d < kCriteoDense; ++d) line += "\t" + (rng() % 4 == 0 ? std::string() : std::to_string(rng() % 100));
      for (size_t t = 0; t < kCriteoTables; ++t) line += "\t" + std::string(rng() % 5 == 0 ? "" : "68fd1e64");
      text += line + "\n";
    }
  }
  if (rng() % 2 == 0) text += std::string(1 + rng() % 3, '\n');  // trailing blank lines
  return text;
}

struct Scan {
  std::vector<std::string> records;  // label and first key, in order
  BadRecords skipped;
  Status status;
};

template <class Inputs>
Scan ScanAll(Inputs inputs, BadRecordPolicy policy) {
  auto format = CriteoTsvFormat();
  RecordScanner scanner(std::move(inputs), format.get(), policy, 16);
  RawRecord record;
  scanner.Shape(&record);
  Scan scan;
  for (;;) {
    bool got = false;
    scan.status = scanner.Next(&record, &got);
    if (!scan.status.ok() || !got) break;
    scan.records.push_back(std::to_string(record.label) + "/" + std::to_string(record.dense[0]));
  }
  scan.skipped = scanner.bad_records();
  return scan;
}

TEST_CASE("Scanning a file's pieces gives the whole file's records, skipped records and first error", "[data]") {
  const uint64_t seed = GENERATE(take(24, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.File("day.tsv");
  const std::string text = CriteoTextWithFaults(rng);
  WriteBytes(path, text);
  // Small pieces end after most lines, blank ones included.
  const uint64_t piece_bytes = rng() % 3 == 0 ? 8 + rng() % 56 : 1 + rng() % (text.size() / 2 + 1);
  CAPTURE(seed, piece_bytes);
  auto pieces = SplitIntoPieces(path, piece_bytes);
  REQUIRE(pieces.ok());
  for (BadRecordPolicy policy : {BadRecordPolicy::kSkip, BadRecordPolicy::kFail}) {
    const Scan want = ScanAll(std::vector<std::string>{path}, policy);
    // Scanned piece by piece, each on its own, as parallel conversion does.
    Scan got;
    for (const TextPiece& piece : *pieces) {
      Scan part = ScanAll(std::vector<TextPiece>{piece}, policy);
      got.records.insert(got.records.end(), part.records.begin(), part.records.end());
      got.skipped.Add(part.skipped);
      got.status = part.status;
      if (!part.status.ok()) break;
    }
    CHECK(got.status.message() == want.status.message());
    if (!want.status.ok()) continue;
    CHECK(got.records == want.records);
    CHECK(got.skipped.skipped == want.skipped.skipped);
    CHECK(got.skipped.by_reason == want.skipped.by_reason);
    CHECK(got.skipped.first == want.skipped.first);
    // And in one scanner, one piece after another.
    const Scan together = ScanAll(*pieces, policy);
    CHECK(together.records == want.records);
    CHECK(together.skipped.skipped == want.skipped.skipped);
  }
}

}  // namespace
}  // namespace actorrec::data::readers
