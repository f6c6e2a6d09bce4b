// Compressed text input: gzip (several members) and zstd (several frames)
// read back byte for byte and line for line; corrupt or truncated streams
// are errors naming the file, never shorter data.
#include "data/readers/decoded_file.hpp"

#include <catch2/catch.hpp>
#include <zlib.h>
#include <zstd.h>

#include <random>
#include <string>

#include "data/readers/line_source.hpp"
#include "reader_test_util.hpp"

namespace actorrec::data::readers {
namespace {

using testing::ScratchDir;
using testing::WriteBytes;

std::string Gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// With a content checksum, as the zstd command line writes by default.
std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), text.data(), text.size());
  ZSTD_freeCCtx(cctx);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string ReadAll(const std::string& path, size_t piece) {
  auto file = DecodedFile::Open(path);
  REQUIRE(file.ok());
  std::string out;
  std::string buf(piece, '\0');
  for (;;) {
    size_t got = 0;
    REQUIRE(file->Read(buf.data(), buf.size(), &got).ok());
    if (got == 0) break;
    out.append(buf.data(), got);
  }
  return out;
}

std::string RandomText(std::mt19937_64& rng, size_t lines) {
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    text += std::to_string(rng() % 2);
    for (int f = 0; f < 1 + static_cast<int>(rng() % 40); ++f) text += "\t" + std::to_string(rng() % 100000);
    text += "\n";
  }
  return text;
}

TEST_CASE("gzip with several members, zstd with several frames and plain text read back the same bytes", "[data]") {
  const uint64_t seed = GENERATE(take(4, random(uint64_t{0}, uint64_t{1} << 40)));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string a = RandomText(rng, 1 + rng() % 3000), b = RandomText(rng, 1 + rng() % 3000);
  const std::string text = a + b;
  WriteBytes(dir.File("plain.txt"), text);
  WriteBytes(dir.File("two.gz"), Gzip(a) + Gzip(b));  // as `cat a.gz b.gz` makes
  WriteBytes(dir.File("renamed.txt"), Zstd(a) + Zstd(b));  // recognized by its bytes, not its name
  const size_t piece = GENERATE(size_t{3}, size_t{4096}, size_t{1} << 22);
  CHECK(ReadAll(dir.File("plain.txt"), piece) == text);
  CHECK(ReadAll(dir.File("two.gz"), piece) == text);
  CHECK(ReadAll(dir.File("renamed.txt"), piece) == text);
  CHECK(DecodedFile::Open(dir.File("two.gz"))->encoding() == DecodedFile::Encoding::kGzip);
  CHECK(DecodedFile::Open(dir.File("renamed.txt"))->encoding() == DecodedFile::Encoding::kZstd);
  CHECK(DecodedFile::Open(dir.File("plain.txt"))->encoding() == DecodedFile::Encoding::kPlain);
}

TEST_CASE("a compressed file's lines come out of a LineSource as the plain file's do", "[data]") {
  std::mt19937_64 rng(11);
  ScratchDir dir;
  const std::string text = RandomText(rng, 5000);
  WriteBytes(dir.File("plain.txt"), text);
  WriteBytes(dir.File("day_0.gz"), Gzip(text));
  WriteBytes(dir.File("day_0.zst"), Zstd(text));
  auto lines = [](const std::string& path) {
    auto source = LineSource::Open(path, 113);  // tiny chunks: line ends at every carry-over position
    REQUIRE(source.ok());
    std::vector<std::string> out;
    std::string_view line;
    for (;;) {
      auto kind = source->Next(&line);
      REQUIRE(kind.ok());
      if (*kind == LineSource::Kind::kEnd) break;
      out.emplace_back(line);
    }
    return out;
  };
  const auto want = lines(dir.File("plain.txt"));
  REQUIRE(want.size() == 5000);
  CHECK(lines(dir.File("day_0.gz")) == want);
  CHECK(lines(dir.File("day_0.zst")) == want);
}

TEST_CASE("a truncated or corrupt compressed file is an error naming the file and the format", "[data]") {
  std::mt19937_64 rng(5);
  ScratchDir dir;
  const std::string text = RandomText(rng, 2000);
  const std::string gz = Gzip(text), zst = Zstd(text);
  auto error_of = [](const std::string& path) -> std::string {
    auto file = DecodedFile::Open(path);
    if (!file.ok()) return file.status().message();
    std::string buf(1 << 16, '\0');
    for (;;) {
      size_t got = 0;
      Status s = file->Read(buf.data(), buf.size(), &got);
      if (!s.ok()) return s.message();
      if (got == 0) return "";
    }
  };
  WriteBytes(dir.File("cut.gz"), gz.substr(0, gz.size() / 2));
  CHECK_THAT(error_of(dir.File("cut.gz")), Catch::StartsWith(dir.File("cut.gz") + ": gzip stream: truncated"));
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x5a;
  WriteBytes(dir.File("bad.gz"), flipped);
  CHECK_THAT(error_of(dir.File("bad.gz")), Catch::StartsWith(dir.File("bad.gz") + ": gzip stream: corrupt data"));
  WriteBytes(dir.File("cut.zst"), zst.substr(0, zst.size() - 7));
  CHECK_THAT(error_of(dir.File("cut.zst")), Catch::StartsWith(dir.File("cut.zst") + ": zstd stream: truncated"));
  std::string bad_zst = zst;
  bad_zst[zst.size() / 2] ^= 0x5a;
  bad_zst[zst.size() / 2 + 1] ^= 0x33;
  WriteBytes(dir.File("bad.zst"), bad_zst);
  CHECK_THAT(error_of(dir.File("bad.zst")), Catch::StartsWith(dir.File("bad.zst") + ": zstd stream: "));
  // Trailing bytes after a complete gzip member are not a member: refused.
  WriteBytes(dir.File("tail.gz"), gz + "junk");
  CHECK_THAT(error_of(dir.File("tail.gz")), Catch::Contains("gzip stream: "));
}

}  // namespace
}  // namespace actorrec::data::readers
