// Helpers shared by the reader tests.
#include "reader_test_util.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace actorrec::data::readers::testing {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "actorrec-readers-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  dir_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Drained Drain(SampleReader& reader, size_t block) {
  Drained d;
  d.samples.Reset(reader.schema());
  SampleBlock piece;
  for (;;) {
    ++d.calls;
    d.status = reader.Next(block, &piece);
    if (!d.status.ok()) return d;
    REQUIRE(piece.size() <= block);
    if (piece.empty()) return d;
    d.samples.Append(piece, 0, piece.size());
  }
}

std::string SharedData(const std::string& relative) { return std::string(ACTORREC_SHARED_DATA) + "/" + relative; }

}  // namespace actorrec::data::readers::testing
