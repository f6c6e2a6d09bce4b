// Tests of the categorical mapping: hashing, the dictionary, save and load.
#include "data/readers/categorical.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "base/digest.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::ReadBytes;
using testing::ScratchDir;
using testing::WriteBytes;

CategoricalMapping MustBuild(std::vector<TableMappingSpec> specs,
                             const std::vector<std::pair<size_t, CategoryKey>>& adds) {
  auto builder = DictionaryBuilder::Create(std::move(specs));
  REQUIRE(builder.ok());
  for (const auto& [t, key] : adds) builder->Add(t, key);
  auto mapping = std::move(builder).value().Finish();
  REQUIRE(mapping.ok());
  return std::move(mapping).value();
}

TEST_CASE("Hashing maps every key to 1 + XXH3(key) mod (rows - 1)", "[data]") {
  auto mapping = CategoricalMapping::Hashing({{"a", 2}, {"b", 1000}});
  REQUIRE(mapping.ok());
  CHECK(mapping->rows(1) == 1000);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const CategoryKey key = rng();
    CHECK(mapping->Map(0, key) == 1);  // a table of 2 rows: missing and one shared row
    char bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>((key >> (8 * b)) & 0xff);
    CHECK(mapping->Map(1, key) == 1 + Digest64(std::string_view(bytes, 8)) % 999);
  }
}

TEST_CASE("Hashing refuses tables with fewer than 2 rows or more than 2^32", "[data]") {
  CHECK_FALSE(CategoricalMapping::Hashing({{"a", 1}}).ok());
  CHECK_FALSE(CategoricalMapping::Hashing({{"a", (uint64_t{1} << 32) + 1}}).ok());
  CHECK(CategoricalMapping::Hashing({{"a", uint64_t{1} << 32}}).ok());
  CHECK_FALSE(DictionaryBuilder::Create({{"a"}, {"a"}}).ok());
  CHECK_FALSE(DictionaryBuilder::Create({{"a", MappingKind::kDictionary, 0, 0}}).ok());
}

TEST_CASE("The dictionary orders frequent values by count then key and shares one rare row", "[data]") {
  // Key 9: 3 times, keys 4 and 5: twice, key 7: once.
  const auto mapping = MustBuild({{"t", MappingKind::kDictionary, 0, 2}},
                                 {{0, 5}, {0, 9}, {0, 7}, {0, 4}, {0, 9}, {0, 5}, {0, 9}, {0, 4}});
  CHECK(mapping.rows(0) == 5);  // missing, rare, 9, 4, 5
  CHECK(mapping.Map(0, 9) == 2);
  CHECK(mapping.Map(0, 4) == 3);
  CHECK(mapping.Map(0, 5) == 4);
  CHECK(mapping.Map(0, 7) == kRareRow);      // seen once, below min_count
  CHECK(mapping.Map(0, 12345) == kRareRow);  // never seen (evaluation data)
}

TEST_CASE("The dictionary matches a std::map model on random data", "[data]") {
  const uint64_t seed = GENERATE(take(5, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  const uint64_t min_count = 1 + rng() % 4;
  std::vector<std::pair<size_t, CategoryKey>> adds;
  std::map<CategoryKey, uint64_t> counts;
  for (int i = 0; i < 3000; ++i) {
    const CategoryKey key = rng() % 2 ? rng() % 50 : rng() % 1000;
    adds.emplace_back(0, key);
    ++counts[key];
  }
  const auto mapping = MustBuild({{"t", MappingKind::kDictionary, 0, min_count}}, adds);
  std::vector<std::pair<uint64_t, CategoryKey>> frequent;
  for (const auto& [key, n] : counts) {
    if (n >= min_count) frequent.emplace_back(n, key);
  }
  std::sort(frequent.begin(), frequent.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  REQUIRE(mapping.rows(0) == frequent.size() + 2);
  for (size_t r = 0; r < frequent.size(); ++r) CHECK(mapping.Map(0, frequent[r].second) == r + 2);
  for (const auto& [key, n] : counts) {
    if (n < min_count) CHECK(mapping.Map(0, key) == kRareRow);
  }
}

TEST_CASE("A saved mapping loads back mapping every key the same way", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(3);
  std::vector<std::pair<size_t, CategoryKey>> adds;
  for (int i = 0; i < 2000; ++i) adds.emplace_back(rng() % 2 == 0 ? 0 : 2, rng() % 300);
  // The KeyMap's empty-slot key is a valid key too, frequent in table 0.
  for (int i = 0; i < 3; ++i) adds.emplace_back(0, ~uint64_t{0});
  const auto mapping = MustBuild({{"dict", MappingKind::kDictionary, 0, 2},
                                  {"hash", MappingKind::kHash, 77, 1},
                                  {"dict1", MappingKind::kDictionary, 0, 1}},
                                 adds);
  REQUIRE(mapping.Save(dir.File("m.map")).ok());
  auto loaded = CategoricalMapping::Load(dir.File("m.map"));
  REQUIRE(loaded.ok());
  CHECK(loaded->tables() == mapping.tables());
  for (size_t t = 0; t < 3; ++t) {
    CHECK(loaded->kind(t) == mapping.kind(t));
    for (CategoryKey key = 0; key < 400; ++key) CHECK(loaded->Map(t, key) == mapping.Map(t, key));
    CHECK(loaded->Map(t, ~uint64_t{0}) == mapping.Map(t, ~uint64_t{0}));
  }
  CHECK(mapping.Map(0, ~uint64_t{0}) >= 2);
  // Deterministic bytes: saving the loaded copy gives the same file.
  REQUIRE(loaded->Save(dir.File("again.map")).ok());
  CHECK(ReadBytes(dir.File("again.map")) == ReadBytes(dir.File("m.map")));
  // The atomic write leaves no temporary behind.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) files += entry.is_regular_file();
  CHECK(files == 2);
}

TEST_CASE("Loading a damaged, truncated or foreign mapping file fails with the path", "[data]") {
  ScratchDir dir;
  const auto mapping = MustBuild({{"d", MappingKind::kDictionary, 0, 1}}, {{0, 1}, {0, 2}, {0, 3}});
  REQUIRE(mapping.Save(dir.File("m.map")).ok());
  std::string bytes = ReadBytes(dir.File("m.map"));
  SECTION("a flipped bit fails the checksum") {
    bytes[bytes.size() / 2] ^= 0x10;
    WriteBytes(dir.File("m.map"), bytes);
    auto loaded = CategoricalMapping::Load(dir.File("m.map"));
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == Status::Code::kCorruption);
    CHECK_THAT(loaded.status().message(), Catch::Contains(dir.File("m.map")) && Catch::Contains("checksum"));
  }
  SECTION("a truncated file fails the checksum") {
    WriteBytes(dir.File("m.map"), bytes.substr(0, bytes.size() - 3));
    CHECK(CategoricalMapping::Load(dir.File("m.map")).status().code() == Status::Code::kCorruption);
  }
  SECTION("another file is not a mapping") {
    WriteBytes(dir.File("m.map"), "hello, this is not a mapping file at all");
    auto loaded = CategoricalMapping::Load(dir.File("m.map"));
    REQUIRE_FALSE(loaded.ok());
    CHECK_THAT(loaded.status().message(), Catch::Contains("not a categorical mapping file"));
  }
  SECTION("a missing file is an I/O error") {
    CHECK(CategoricalMapping::Load(dir.File("none.map")).status().code() == Status::Code::kIoError);
  }
}

}  // namespace
}  // namespace actorrec::data::readers
