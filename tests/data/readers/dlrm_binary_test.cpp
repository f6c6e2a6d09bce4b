// Tests of the DLRM reference binary reader.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "data/readers/dlrm_binary_reader.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

constexpr size_t kDense = 13, kTables = 26, kValues = 40, kRecord = 160;

DlrmBinaryOptions Options() {
  DlrmBinaryOptions o;
  for (size_t t = 0; t < kTables; ++t) o.table_rows.push_back(10 + t);
  return o;
}

// n random samples as the file's int32 values.
std::vector<int32_t> RandomValues(std::mt19937_64& rng, size_t n) {
  std::vector<int32_t> v;
  for (size_t i = 0; i < n; ++i) {
    v.push_back(static_cast<int32_t>(rng() % 2));
    for (size_t j = 0; j < kDense; ++j) v.push_back(static_cast<int32_t>(rng() % 1000) - 2);
    for (size_t t = 0; t < kTables; ++t) v.push_back(static_cast<int32_t>(rng() % (10 + t)));
  }
  return v;
}

std::string Bytes(const std::vector<int32_t>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    const auto u = static_cast<uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return out;
}

SampleBlock Expected(const std::vector<int32_t>& v) {
  SampleBlock want;
  want.Reset(kDense, kTables);
  for (size_t i = 0; i < v.size() / kValues; ++i) {
    const int32_t* s = v.data() + i * kValues;
    want.labels.push_back(static_cast<float>(s[0]));
    for (size_t j = 0; j < kDense; ++j) want.dense.push_back(static_cast<float>(std::log1p(std::max(0, s[1 + j]))));
    for (size_t t = 0; t < kTables; ++t) {
      want.tables[t].values.push_back(static_cast<RowId>(s[1 + kDense + t]));
      want.tables[t].offsets.push_back(static_cast<uint32_t>(want.tables[t].values.size()));
    }
  }
  return want;
}

TEST_CASE("DLRM binary files read back as written, across files", "[data]") {
  const uint64_t seed = GENERATE(take(5, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const auto a = RandomValues(rng, 1 + rng() % 100);
  const auto b = RandomValues(rng, 1 + rng() % 100);
  WriteBytes(dir.File("a.bin"), Bytes(a));
  WriteBytes(dir.File("b.bin"), Bytes(b));
  auto reader = OpenDlrmBinary({dir.File("a.bin"), dir.File("b.bin")}, Options(), BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  CHECK((*reader)->schema().tables[25].rows == 35);
  auto all = a;
  all.insert(all.end(), b.begin(), b.end());
  const auto got = Drain(**reader, 1 + rng() % 40);
  REQUIRE(got.status.ok());
  CHECK(got.samples == Expected(all));
}

TEST_CASE("A DLRM binary file cut inside a sample fails at open or counts the partial sample", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(5);
  const auto v = RandomValues(rng, 4);
  WriteBytes(dir.File("cut.bin"), Bytes(v).substr(0, 3 * kRecord + 100));
  const std::string want = dir.File("cut.bin") +
                           ": sample 3 at byte 480: truncated sample: the file ends 100 bytes into a 160-byte sample "
                           "(size 580 is not a multiple of it: truncated or misaligned)";
  SECTION("fail") {
    auto reader = OpenDlrmBinary({dir.File("cut.bin")}, Options(), BadRecordPolicy::kFail);
    REQUIRE_FALSE(reader.ok());
    CHECK(reader.status().message() == want);
  }
  SECTION("skip") {
    auto reader = OpenDlrmBinary({dir.File("cut.bin")}, Options(), BadRecordPolicy::kSkip);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    REQUIRE(got.status.ok());
    CHECK(got.samples == Expected(std::vector<int32_t>(v.begin(), v.begin() + 3 * kValues)));
    CHECK((*reader)->bad_records().skipped == 1);
    CHECK((*reader)->bad_records().first == want);
  }
}

TEST_CASE("A misaligned DLRM binary file shows as bad labels or ids, named by sample", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(9);
  auto v = RandomValues(rng, 6);
  SECTION("an id out of range") {
    v[2 * kValues + 1 + kDense + 4] = 14;  // C5 has 14 rows
    WriteBytes(dir.File("x.bin"), Bytes(v));
    auto fail = OpenDlrmBinary({dir.File("x.bin")}, Options(), BadRecordPolicy::kFail);
    REQUIRE(fail.ok());
    const auto got = Drain(**fail, 100);
    CHECK(got.status.message() ==
          dir.File("x.bin") + ": sample 2 at byte 320: row id out of range: C5 is 14, expected [0, 14)");
    CHECK(got.samples.size() == 0);
    auto skip = OpenDlrmBinary({dir.File("x.bin")}, Options(), BadRecordPolicy::kSkip);
    REQUIRE(skip.ok());
    const auto kept = Drain(**skip);
    REQUIRE(kept.status.ok());
    CHECK(kept.samples.size() == 5);
    CHECK((*skip)->bad_records().by_reason.at("row id out of range") == 1);
  }
  SECTION("a file shifted by one value reads labels from dense columns") {
    const std::string bytes = Bytes(v).substr(4) + std::string(4, '\0');
    WriteBytes(dir.File("x.bin"), bytes);
    auto skip = OpenDlrmBinary({dir.File("x.bin")}, Options(), BadRecordPolicy::kSkip);
    REQUIRE(skip.ok());
    const auto got = Drain(**skip);
    REQUIRE(got.status.ok());
    CHECK((*skip)->bad_records().skipped > 0);
    CHECK(got.samples.size() + (*skip)->bad_records().skipped == 6);
  }
}

TEST_CASE("An empty DLRM binary file is an error under both policies", "[data]") {
  ScratchDir dir;
  WriteBytes(dir.File("empty.bin"), "");
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  auto reader = OpenDlrmBinary({dir.File("empty.bin")}, Options(), policy);
  REQUIRE_FALSE(reader.ok());
  CHECK(reader.status().message() == dir.File("empty.bin") + ": file is empty");
}

}  // namespace
}  // namespace actorrec::data::readers
