// Tests of the .npy header parser and the TorchRec NumPy triplet reader.
#include "data/readers/npy_header.hpp"
#include "data/readers/npy_triplet_reader.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::Drain;
using testing::ScratchDir;
using testing::WriteBytes;

// A .npy file as numpy.save writes it: dict padded with spaces and a
// newline so that the data starts at a multiple of 64 bytes.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data, int version = 1,
                bool fortran = false) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const size_t len = dict.size();
  for (size_t b = 0; b < prefix - 8; ++b) out += static_cast<char>((len >> (8 * b)) & 0xff);
  return out + dict + data;
}

template <class T>
std::string Raw(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST_CASE("The .npy header parser reads versions 1.0, 2.0 and 3.0", "[data]") {
  const int version = GENERATE(1, 2, 3);
  const std::string bytes = Npy("<i8", "(3, 26)", Raw(std::vector<int64_t>(78, 1)), version);
  auto header = ParseNpyHeader("x.npy", bytes);
  REQUIRE(header.ok());
  CHECK(header->type == NpyType::kInt64);
  CHECK(header->item_bytes == 8);
  CHECK(header->shape == std::vector<uint64_t>{3, 26});
  CHECK(header->data_offset % 64 == 0);
  CHECK(header->data_offset + 78 * 8 == bytes.size());
  auto one_d = ParseNpyHeader("x.npy", Npy("<f4", "(5,)", Raw(std::vector<float>(5))));
  REQUIRE(one_d.ok());
  CHECK(one_d->shape == std::vector<uint64_t>{5});
}

TEST_CASE("The .npy header parser refuses Fortran order, unknown dtypes and non-npy bytes clearly", "[data]") {
  auto fortran = ParseNpyHeader("f.npy", Npy("<f4", "(2, 2)", Raw(std::vector<float>(4)), 1, true));
  CHECK(fortran.status().code() == Status::Code::kNotSupported);
  CHECK_THAT(fortran.status().message(), Catch::StartsWith("f.npy: ") && Catch::Contains("Fortran"));
  auto big_endian = ParseNpyHeader("b.npy", Npy(">f4", "(2,)", Raw(std::vector<float>(2))));
  CHECK(big_endian.status().message() ==
        "b.npy: unsupported .npy dtype '>f4' (this reader takes little-endian <f4, <i4 and <i8)");
  CHECK(ParseNpyHeader("u.npy", Npy("<u2", "(2,)", "abcd")).status().code() == Status::Code::kNotSupported);
  CHECK_THAT(ParseNpyHeader("t.npy", "plain text, not numpy").status().message(), Catch::Contains("magic"));
  CHECK_FALSE(ParseNpyHeader("s.npy", Npy("<f4", "()", "abcd")).ok());
  std::string v9 = Npy("<f4", "(1,)", "abcd");
  v9[6] = 9;
  CHECK(ParseNpyHeader("v.npy", v9).status().code() == Status::Code::kNotSupported);
}

struct Day {
  std::vector<float> dense;
  std::vector<int64_t> sparse;
  std::vector<int32_t> labels;
  size_t n = 0;
};

constexpr size_t kDense = 3, kTables = 4;

Day RandomDay(std::mt19937_64& rng, size_t n) {
  Day d;
  d.n = n;
  for (size_t i = 0; i < n; ++i) {
    d.labels.push_back(static_cast<int32_t>(rng() % 2));
    for (size_t j = 0; j < kDense; ++j) d.dense.push_back(static_cast<float>(rng() % 100) / 7.0f);
    for (size_t t = 0; t < kTables; ++t) d.sparse.push_back(static_cast<int64_t>(rng() % (5 + t)));
  }
  return d;
}

// Writes a day with the sparse ids as int64 or int32 and labels as int32
// [n], or float32 [n, 1].
NpyDayFiles WriteDay(const ScratchDir& dir, int index, const Day& d, bool sparse64, bool float_labels) {
  const NpyDayFiles files = TorchRecDayFiles(dir.path(), index);
  const std::string n = std::to_string(d.n);
  WriteBytes(files.dense, Npy("<f4", "(" + n + ", " + std::to_string(kDense) + ")", Raw(d.dense)));
  const std::string sparse_shape = "(" + n + ", " + std::to_string(kTables) + ")";
  if (sparse64) {
    WriteBytes(files.sparse, Npy("<i8", sparse_shape, Raw(d.sparse), 2));
  } else {
    WriteBytes(files.sparse, Npy("<i4", sparse_shape, Raw(std::vector<int32_t>(d.sparse.begin(), d.sparse.end()))));
  }
  if (float_labels) {
    WriteBytes(files.labels, Npy("<f4", "(" + n + ", 1)", Raw(std::vector<float>(d.labels.begin(), d.labels.end()))));
  } else {
    WriteBytes(files.labels, Npy("<i4", "(" + n + ",)", Raw(d.labels)));
  }
  return files;
}

NpyTripletOptions Options() {
  NpyTripletOptions o;
  for (size_t t = 0; t < kTables; ++t) o.table_rows.push_back(5 + t);
  return o;
}

TEST_CASE("TorchRec NumPy triplets read back as written, across days and dtypes", "[data]") {
  const uint64_t seed = GENERATE(take(4, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const Day d0 = RandomDay(rng, rng() % 50);  // an empty day (n = 0) is allowed
  const Day d1 = RandomDay(rng, 1 + rng() % 50);
  const std::vector<NpyDayFiles> days = {WriteDay(dir, 0, d0, true, false), WriteDay(dir, 1, d1, false, true)};
  CHECK(days[1].sparse == dir.path() + "/day_1_sparse.npy");
  auto reader = OpenNpyTriplets(days, Options(), BadRecordPolicy::kFail);
  REQUIRE(reader.ok());
  CHECK((*reader)->schema().num_dense() == kDense);
  SampleBlock want;
  want.Reset(kDense, kTables);
  for (const Day* d : {&d0, &d1}) {
    for (size_t i = 0; i < d->n; ++i) {
      want.labels.push_back(static_cast<float>(d->labels[i]));
      for (size_t j = 0; j < kDense; ++j) want.dense.push_back(d->dense[i * kDense + j]);
      for (size_t t = 0; t < kTables; ++t) {
        want.tables[t].values.push_back(static_cast<RowId>(d->sparse[i * kTables + t]));
        want.tables[t].offsets.push_back(static_cast<uint32_t>(want.tables[t].values.size()));
      }
    }
  }
  const auto got = Drain(**reader, 1 + rng() % 30);
  REQUIRE(got.status.ok());
  CHECK(got.samples == want);
}

TEST_CASE("TorchRec triplets take ids modulo the table size only when asked", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(1);
  Day d = RandomDay(rng, 3);
  d.sparse[1 * kTables + 2] = 7 + 3 * 7;  // C3 has 7 rows
  d.sparse[2 * kTables + 0] = -1;         // a raw int32 hex value that wrapped
  const auto files = WriteDay(dir, 0, d, true, false);
  SECTION("strict") {
    auto reader = OpenNpyTriplets({files}, Options(), BadRecordPolicy::kSkip);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    REQUIRE(got.status.ok());
    CHECK(got.samples.size() == 1);
    CHECK((*reader)->bad_records().by_reason.at("row id out of range") == 2);
    CHECK((*reader)->bad_records().first == files.sparse + ": sample 1 at byte " +
                                                std::to_string(128 + 1 * kTables * 8) +
                                                ": row id out of range: C3 is 28, expected [0, 7)");
  }
  SECTION("modulo, as NumPy computes it") {
    NpyTripletOptions o = Options();
    o.modulo_rows = true;
    auto reader = OpenNpyTriplets({files}, o, BadRecordPolicy::kFail);
    REQUIRE(reader.ok());
    const auto got = Drain(**reader);
    REQUIRE(got.status.ok());
    CHECK(got.samples.tables[2].values[1] == 0);
    CHECK(got.samples.tables[0].values[2] == 4);  // -1 mod 5
  }
}

TEST_CASE("Bad TorchRec triplets fail at open under both policies, naming the file", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(2);
  const Day d = RandomDay(rng, 10);
  const auto policy = GENERATE(BadRecordPolicy::kFail, BadRecordPolicy::kSkip);
  auto files = WriteDay(dir, 0, d, false, false);
  SECTION("labels with another sample count") {
    WriteBytes(files.labels, Npy("<i4", "(9,)", Raw(std::vector<int32_t>(9))));
    auto reader = OpenNpyTriplets({files}, Options(), policy);
    CHECK(reader.status().message() == "the day's files disagree on the sample count: " + files.dense + " has 10, " +
                                           files.sparse + " has 10, " + files.labels + " has 9");
  }
  SECTION("a truncated dense file") {
    std::string bytes = testing::ReadBytes(files.dense);
    WriteBytes(files.dense, bytes.substr(0, bytes.size() - 5));
    auto reader = OpenNpyTriplets({files}, Options(), policy);
    CHECK(reader.status().code() == Status::Code::kCorruption);
    CHECK_THAT(reader.status().message(), Catch::StartsWith(files.dense + ": truncated .npy file: float32 [10, 3]"));
  }
  SECTION("an empty sparse file") {
    WriteBytes(files.sparse, "");
    CHECK(OpenNpyTriplets({files}, Options(), policy).status().message() == files.sparse + ": file is empty");
  }
  SECTION("a sparse file with the wrong number of tables") {
    WriteBytes(files.sparse, Npy("<i4", "(10, 3)", Raw(std::vector<int32_t>(30))));
    CHECK_THAT(OpenNpyTriplets({files}, Options(), policy).status().message(),
               Catch::Contains(files.sparse) && Catch::Contains("[n, 4]"));
  }
  SECTION("float64 dense values") {
    WriteBytes(files.dense, Npy("<f8", "(10, 3)", Raw(std::vector<double>(30))));
    CHECK(OpenNpyTriplets({files}, Options(), policy).status().code() == Status::Code::kNotSupported);
  }
  SECTION("a missing labels file") {
    std::remove(files.labels.c_str());
    CHECK(OpenNpyTriplets({files}, Options(), policy).status().code() == Status::Code::kIoError);
  }
}

TEST_CASE("TorchRec triplets count unknown labels and non-finite dense values as bad records", "[data]") {
  ScratchDir dir;
  std::mt19937_64 rng(4);
  Day d = RandomDay(rng, 5);
  d.labels[1] = 2;
  d.dense[3 * kDense + 1] = std::nanf("");
  const auto files = WriteDay(dir, 0, d, false, false);
  auto fail = OpenNpyTriplets({files}, Options(), BadRecordPolicy::kFail);
  REQUIRE(fail.ok());
  const auto failed = Drain(**fail);
  CHECK(failed.status.message() ==
        files.labels + ": sample 1 at byte 132: unknown label value: label is 2.000000, expected 0 or 1");
  auto skip = OpenNpyTriplets({files}, Options(), BadRecordPolicy::kSkip);
  REQUIRE(skip.ok());
  const auto got = Drain(**skip);
  REQUIRE(got.status.ok());
  CHECK(got.samples.size() == 3);
  CHECK((*skip)->bad_records().by_reason.at("unknown label value") == 1);
  CHECK((*skip)->bad_records().by_reason.at("non-finite dense value") == 1);
}

}  // namespace
}  // namespace actorrec::data::readers
