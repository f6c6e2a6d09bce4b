// safetensors: round trips, the exact byte layout Python's safetensors
// writes, and every kind of corrupt header refused with a named error.
#include "base/safetensors.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.hpp"
#include "data/gen/random.hpp"

using namespace actorrec;
namespace fs = std::filesystem;

namespace {

std::string TempFile(const std::string& name) {
  return (fs::temp_directory_path() / ("actorrec_st_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// A file whose header is `json` (unpadded) followed by `data_bytes` zero bytes.
std::string FileWithHeader(const std::string& json, size_t data_bytes) {
  return U64(json.size()) + json + std::string(data_bytes, '\0');
}

Status DecodeStatus(const std::string& bytes) { return DecodeSafetensors(bytes, "m.safetensors").status(); }

// The hand-made file: what `safetensors.numpy.save_file({"a": [[1, 2], [3,
// 4]], "b": [0.5]} as float32, "m.safetensors", metadata={"format": "np"})`
// writes: compact JSON, metadata first, tensors by name, one space of
// padding to 144 bytes, then the little-endian floats.
const char kPythonHeader[] =
    "{\"__metadata__\":{\"format\":\"np\"},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[16,20]}} ";
const unsigned char kPythonPrefix[8] = {144, 0, 0, 0, 0, 0, 0, 0};
const unsigned char kPythonData[20] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00,
                                       0x40, 0x40, 0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0x00, 0x3f};

std::string PythonFile() {
  std::string bytes(reinterpret_cast<const char*>(kPythonPrefix), 8);
  bytes.append(kPythonHeader);
  bytes.append(reinterpret_cast<const char*>(kPythonData), sizeof kPythonData);
  return bytes;
}

}  // namespace

TEST_CASE("safetensors encoding is byte for byte what Python writes", "[base]") {
  REQUIRE(sizeof kPythonHeader - 1 == 144);
  // Given out of name order: the writer sorts as Python does.
  const std::vector<NamedTensor> tensors = {{"b", {1}, {0.5f}}, {"a", {2, 2}, {1, 2, 3, 4}}};
  auto bytes = EncodeSafetensors(tensors, {{"format", "np"}});
  REQUIRE(bytes.ok());
  CHECK(*bytes == PythonFile());

  auto file = DecodeSafetensors(PythonFile(), "m.safetensors");
  REQUIRE(file.ok());
  REQUIRE(file->tensors.size() == 2);
  CHECK(file->tensors[0].name == "a");
  CHECK(file->tensors[0].shape == std::vector<uint64_t>{2, 2});
  CHECK(file->tensors[0].values == std::vector<float>{1, 2, 3, 4});
  REQUIRE(file->Find("b") != nullptr);
  CHECK(file->Find("b")->values == std::vector<float>{0.5f});
  CHECK(file->Find("c") == nullptr);
  CHECK(file->metadata == std::map<std::string, std::string>{{"format", "np"}});
}

TEST_CASE("safetensors without metadata, empty and scalar tensors", "[base]") {
  auto bytes = EncodeSafetensors({{"s", {}, {7.0f}}, {"z", {0, 3}, {}}}, {});
  REQUIRE(bytes.ok());
  const std::string expected_header =
      "{\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
      "\"z\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[4,4]}}";
  std::string padded = expected_header + std::string((8 - expected_header.size() % 8) % 8, ' ');
  CHECK(bytes->substr(8, padded.size()) == padded);
  CHECK(bytes->size() == 8 + padded.size() + 4);
  auto file = DecodeSafetensors(*bytes, "x");
  REQUIRE(file.ok());
  CHECK(file->Find("s")->values == std::vector<float>{7.0f});
  CHECK(file->Find("z")->values.empty());
  CHECK(file->metadata.empty());
}

TEST_CASE("safetensors round-trips random tensors, names and metadata through a file", "[base]") {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    data::gen::Rng rng(seed);
    std::vector<NamedTensor> tensors;
    const size_t count = rng.Below(5);
    for (size_t i = 0; i < count; ++i) {
      NamedTensor t;
      // Names with escapes and UTF-8, kept unique by the index.
      t.name = std::string("t").append(std::to_string(i)).append(rng.Below(2) ? "/emb\"\\\n\x01" : "\xc3\xa9\xe2\x82\xac");
      const size_t dims = rng.Below(4);
      for (size_t d = 0; d < dims; ++d) t.shape.push_back(rng.Below(5));
      t.values.resize(t.elements());
      for (float& v : t.values) {
        const auto bits = static_cast<uint32_t>(rng.Next());
        std::memcpy(&v, &bits, 4);  // any bit pattern, NaNs included
      }
      tensors.push_back(std::move(t));
    }
    std::map<std::string, std::string> metadata;
    if (rng.Below(2)) metadata["step"] = std::to_string(seed);
    if (rng.Below(2)) metadata["note\t"] = "quote \" and slash /";

    const std::string path = TempFile("roundtrip");
    REQUIRE(WriteSafetensors(path, tensors, metadata).ok());
    auto file = ReadSafetensors(path);
    fs::remove(path);
    REQUIRE(file.ok());
    CHECK(file->metadata == metadata);
    REQUIRE(file->tensors.size() == tensors.size());
    for (const auto& t : tensors) {
      const NamedTensor* got = file->Find(t.name);
      REQUIRE(got != nullptr);
      CHECK(got->shape == t.shape);
      REQUIRE(got->values.size() == t.values.size());
      CHECK(std::memcmp(got->values.data(), t.values.data(), t.values.size() * 4) == 0);
    }
  }
}

TEST_CASE("the reader accepts any whitespace, key order, tensor order and escapes", "[base]") {
  const std::string json =
      " {\n\t\"b\" : { \"data_offsets\" : [ 0 , 4 ] , \"shape\" : [ 1 ] , \"dtype\" : \"F32\" } ,"
      "\"\\u00e9\\ud83d\\ude00\\/\" : {\"shape\":[],\"dtype\":\"F32\",\"data_offsets\":[4,8]},"
      "\"__metadata__\":{}}\r\n";
  auto file = DecodeSafetensors(FileWithHeader(json, 8), "x");
  REQUIRE(file.ok());
  REQUIRE(file->tensors.size() == 2);
  CHECK(file->tensors[0].name == "b");
  CHECK(file->tensors[1].name == "\xc3\xa9\xf0\x9f\x98\x80/");
}

TEST_CASE("the reader refuses corrupt headers, naming the file and the tensor", "[base]") {
  const auto refused = [](const std::string& json, size_t data_bytes, const std::string& expected) {
    const Status st = DecodeStatus(FileWithHeader(json, data_bytes));
    INFO(json << " -> " << st.ToString());
    CHECK_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::StartsWith("m.safetensors: ") && Catch::Contains(expected));
  };
  const std::string ok_a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
  refused("{" + ok_a + "}", 4, "tensor \"a\"");                      // offsets past the data
  refused("{" + ok_a + "}", 12, "cover 8 bytes of a 12-byte");      // unused data
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "tensor \"a\": shape");
  refused("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8, "dtype F16");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "end before");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
          "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
          12, "tensor \"b\": data_offsets [8, 12) do not follow");  // a gap
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
          "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
          8, "do not follow");  // an overlap
  refused("{" + ok_a + "," + ok_a + "}", 8, "tensor \"a\" appears twice");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "tensor \"a\": needs");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8, "unknown field \"x\"");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "non-negative integer");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, "fraction");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", 8, "leading zero");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,8]}}", 8, "64 bits");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],\"data_offsets\":[0,8]}}", 8, "shape");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, "[begin, end]");
  refused("{" + ok_a, 8, "expected");                     // unterminated object
  refused("{" + ok_a + "} x", 8, "bytes after the header");
  refused("[" + ok_a + "]", 8, "expected the header object");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", 8, "expected a tensor name");
  refused("{\"a\x01\":{}}", 8, "raw control character");
  refused("{\"\\x\":{}}", 8, "unknown escape");
  refused("{\"\\ud800\":{}}", 8, "lone high surrogate");
  refused("{\"\xff\":{}}", 8, "not valid UTF-8");
  refused("{\"\xc0\xaf\":{}}", 8, "not valid UTF-8");  // overlong '/'
  refused("{\"__metadata__\":{\"k\":1}}", 0, "a metadata value");
  refused("{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", 0, "metadata key \"k\" appears twice");
  refused("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "twice");
  refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "expected");
}

TEST_CASE("the reader bounds the header length and names truncation", "[base]") {
  CHECK_THAT(DecodeStatus("").message(), Catch::Contains("shorter than its 8-byte header length"));
  CHECK_THAT(DecodeStatus(U64(uint64_t{1} << 62) + "{}").message(), Catch::Contains("exceeds the limit"));
  CHECK_THAT(DecodeStatus(U64(100) + "{}").message(), Catch::Contains("runs past the end"));
  CHECK_THAT(DecodeStatus(U64(1) + "{").message(), Catch::Contains("too short"));
  // Every truncation of a valid file is refused, never a crash.
  const std::string full = PythonFile();
  for (size_t n = 0; n < full.size(); ++n) {
    INFO("length " << n);
    CHECK_FALSE(DecodeSafetensors(full.substr(0, n), "m").ok());
  }
  // Every single flipped byte in the header is either refused or decodes to
  // something self-consistent (a flip inside a name or the metadata is legal).
  for (size_t i = 8; i < 8 + 144; ++i) {
    std::string bytes = full;
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    (void)DecodeSafetensors(bytes, "m");
  }
  CHECK(ReadSafetensors(TempFile("missing")).status().code() == Status::Code::kNotFound);
}

TEST_CASE("the writer refuses bad tensors", "[base]") {
  CHECK(EncodeSafetensors({{"a", {3}, {1, 2}}}, {}).status().code() == Status::Code::kInvalidArgument);
  CHECK(EncodeSafetensors({{"", {1}, {1}}}, {}).status().code() == Status::Code::kInvalidArgument);
  CHECK(EncodeSafetensors({{"__metadata__", {1}, {1}}}, {}).status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(EncodeSafetensors({{"a", {1}, {1}}, {"a", {1}, {2}}}, {}).status().message(),
             Catch::Contains("\"a\" appears twice"));
  const std::string path = TempFile("bad");
  CHECK_THAT(WriteSafetensors(path, {{"a", {3}, {1}}}, {}).message(), Catch::StartsWith(path));
  CHECK_FALSE(fs::exists(path));
}
