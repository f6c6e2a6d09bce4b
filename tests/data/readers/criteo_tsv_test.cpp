// Tests of the Criteo TSV reader against a plain model of the format.
#include "data/readers/criteo_tsv.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>

#include "data/readers/fields.hpp"
#include "data/readers/text_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ReadBytes;
using testing::ScratchDir;
using testing::WriteBytes;

struct CriteoRecord {
  int label = 0;
  std::optional<int64_t> dense[kCriteoDense];
  std::optional<uint32_t> cats[kCriteoTables];
};

std::vector<CriteoRecord> RandomRecords(std::mt19937_64& rng, size_t n) {
  std::vector<CriteoRecord> out(n);
  for (auto& r : out) {
    r.label = static_cast<int>(rng() % 2);
    for (auto& d : r.dense) {
      if (rng() % 5 != 0) d = static_cast<int64_t>(rng() % 2000) - 3;  // a few negatives, as in I2
    }
    for (size_t t = 0; t < kCriteoTables; ++t) {
      // Few distinct values per table so that the dictionary has repeats.
      if (rng() % 6 != 0) r.cats[t] = static_cast<uint32_t>((rng() % (5 + 10 * t)) * 0x9E3779B1u);
    }
  }
  return out;
}

std::string Line(const CriteoRecord& r, bool upper) {
  std::string line = std::to_string(r.label);
  // Appended piecewise: g++ 12 warns falsely (-Wrestrict) on "\t" + string.
  for (const auto& d : r.dense) line.append("\t").append(d ? std::to_string(*d) : std::string());
  for (const auto& c : r.cats) {
    char hex[16] = "";
    if (c) std::snprintf(hex, sizeof hex, upper ? "%08X" : "%08x", *c);
    line += "\t";
    line += hex;
  }
  return line;
}

std::string Text(const std::vector<CriteoRecord>& records, std::mt19937_64& rng) {
  std::string text;
  for (const auto& r : records) text += Line(r, rng() % 2 == 0) + "\n";
  return text;
}

// What the reader must produce, from the model and a row function.
template <class RowOf>
SampleBlock Expected(const std::vector<CriteoRecord>& records, RowOf row_of) {
  SampleBlock want;
  want.Reset(static_cast<uint32_t>(kCriteoDense), kCriteoTables);
  for (const auto& r : records) {
    want.labels.push_back(static_cast<float>(r.label));
    for (const auto& d : r.dense)
      want.dense.push_back(d ? static_cast<float>(std::log1p(std::max<double>(*d, 0))) : 0.0f);
    for (size_t t = 0; t < kCriteoTables; ++t) {
      want.tables[t].values.push_back(r.cats[t] ? row_of(t, *r.cats[t]) : 0);
      want.tables[t].offsets.push_back(static_cast<uint32_t>(want.tables[t].values.size()));
    }
  }
  return want;
}

TEST_CASE("Criteo TSV reads back what was written, hashed into given table sizes", "[data]") {
  const uint64_t seed = GENERATE(take(5, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const auto records = RandomRecords(rng, 1 + rng() % 300);
  std::string text = Text(records, rng);
  if (rng() % 2) text.pop_back();  // the last line may lack its newline
  WriteBytes(dir.File("train.txt"), text);
  std::vector<TableSchema> tables;
  for (size_t t = 0; t < kCriteoTables; ++t) tables.push_back({Numbered("C", t + 1), 2 + t * 1000});
  auto mapping = CategoricalMapping::Hashing(tables);
  REQUIRE(mapping.ok());
  auto shared = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
  // Tiny chunks put line ends at every position of the carry-over.
  const size_t chunk = GENERATE(size_t{97}, size_t{4} << 20);
  auto reader = TextReader::Open({dir.File("train.txt")}, CriteoTsvFormat(), shared, BadRecordPolicy::kFail, chunk);
  REQUIRE(reader.ok());
  CHECK((*reader)->schema().tables == tables);
  CHECK((*reader)->schema().dense_names.front() == "I1");
  const auto got = Drain(**reader, 1 + rng() % 50);
  REQUIRE(got.status.ok());
  CHECK(got.samples == Expected(records, [&](size_t t, uint32_t v) { return shared->Map(t, KeyOfHex(v)); }));
  CHECK((*reader)->bad_records().skipped == 0);
}

TEST_CASE("Criteo TSV builds a dictionary over several day files and maps by count", "[data]") {
  std::mt19937_64 rng(11);
  ScratchDir dir;
  const auto day0 = RandomRecords(rng, 200);
  const auto day1 = RandomRecords(rng, 150);
  WriteBytes(dir.File("day_0"), Text(day0, rng));
  WriteBytes(dir.File("day_1"), Text(day1, rng));
  const std::vector<std::string> days = {dir.File("day_0"), dir.File("day_1")};
  auto format = CriteoTsvFormat();
  auto mapping = BuildMapping(days, format.get(), DictionarySpecs(*format, 3), BadRecordPolicy::kFail);
  REQUIRE(mapping.ok());

  // The model: per table, counts of each value, rows by (-count, value).
  std::vector<std::map<uint32_t, RowId>> rows(kCriteoTables);
  for (size_t t = 0; t < kCriteoTables; ++t) {
    std::map<uint32_t, uint64_t> counts;
    for (const auto* day : {&day0, &day1}) {
      for (const auto& r : *day) {
        if (r.cats[t]) ++counts[*r.cats[t]];
      }
    }
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (auto [v, n] : counts) order.emplace_back(n, v);
    std::sort(order.begin(), order.end(),
              [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    RowId next = 2;
    for (auto [n, v] : order) rows[t][v] = n >= 3 ? next++ : kRareRow;
    CHECK(mapping->rows(t) == next);
  }
  auto shared = std::make_shared<const CategoricalMapping>(std::move(mapping).value());
  auto reader = TextReader::Open(days, CriteoTsvFormat(), shared, BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  auto all = day0;
  all.insert(all.end(), day1.begin(), day1.end());
  const auto got = Drain(**reader, 64);
  REQUIRE(got.status.ok());
  CHECK(got.samples == Expected(all, [&](size_t t, uint32_t v) { return rows[t].at(v); }));
}

TEST_CASE("Counting the days on several threads, in pieces, gives one thread's mapping, skipped records and error", "[data]") {
  const auto make_format = []() -> Result<std::unique_ptr<TextFormat>> { return CriteoTsvFormat(); };
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ScratchDir dir;
    std::vector<std::string> days;
    for (int d = 0; d < 5; ++d) {
      std::string text = Text(RandomRecords(rng, 20 + rng() % 120), rng);
      if (d == 1 || d == 3) text += "1\t2\tbroken " + std::to_string(d) + "\n" + Text(RandomRecords(rng, 7), rng);
      days.push_back(dir.File("day_" + std::to_string(d)));
      WriteBytes(days.back(), text);
    }
    auto one_format = CriteoTsvFormat();
    const auto specs = DictionarySpecs(*one_format, 1 + seed % 3);
    BadRecords want_skipped;
    auto want = BuildMapping(days, one_format.get(), specs, BadRecordPolicy::kSkip, &want_skipped);
    REQUIRE(want.ok());
    REQUIRE(want->Save(dir.File("want.map")).ok());
    REQUIRE(want_skipped.skipped == 2);
    auto failed = BuildMapping(days, one_format.get(), specs, BadRecordPolicy::kFail);
    REQUIRE_FALSE(failed.ok());
    REQUIRE(failed.status().message().find("day_1") != std::string::npos);
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      CAPTURE(threads);
      CountingOptions options;
      options.threads = threads;
      options.piece_bytes = threads == 1 ? kDefaultPieceBytes : 64 + rng() % 2000;  // days cut into pieces
      size_t last_counted = 0;
      options.progress = [&](size_t counted, size_t files, double) {
        CHECK(files >= days.size());
        last_counted = counted;
      };
      BadRecords skipped;
      auto got = BuildMappingInParallel(days, make_format, specs, BadRecordPolicy::kSkip, options, &skipped);
      REQUIRE(got.ok());
      CHECK(last_counted >= days.size());
      REQUIRE(got->Save(dir.File("got.map")).ok());
      CHECK(ReadBytes(dir.File("got.map")) == ReadBytes(dir.File("want.map")));
      CHECK(skipped.skipped == want_skipped.skipped);
      CHECK(skipped.by_reason == want_skipped.by_reason);
      CHECK(skipped.first == want_skipped.first);
      auto refused = BuildMappingInParallel(days, make_format, specs, BadRecordPolicy::kFail, options);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.status().message() == failed.status().message());
    }
  }
}

TEST_CASE("A TextReader refuses a mapping whose tables are not the format's", "[data]") {
  auto mapping = CategoricalMapping::Hashing({{"C1", 10}});
  REQUIRE(mapping.ok());
  auto reader =
      TextReader::Open({"unused"}, CriteoTsvFormat(),
                       std::make_shared<const CategoricalMapping>(std::move(mapping).value()), BadRecordPolicy::kFail);
  REQUIRE_FALSE(reader.ok());
  CHECK_THAT(reader.status().message(), Catch::Contains("1 tables, the format has 26"));
}

}  // namespace
}  // namespace actorrec::data::readers
