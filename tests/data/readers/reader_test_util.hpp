// Scratch directories, file writing and draining helpers for the reader tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/line_source.hpp"
#include "data/sample_reader.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::data::readers::testing {

using ScratchDir = ::actorrec::testing::TempDir;
using ::actorrec::testing::ReadBytes;
using ::actorrec::testing::WriteBytes;

// Everything a reader yields, read `block` samples at a time, and the status
// that ended it (Ok at a clean end).
struct Drained {
  SampleBlock samples;
  Status status;
  size_t calls = 0;
};
Drained Drain(SampleReader& reader, size_t block = 7);

// Every line of `source` to its end ("<too long>" for a line past the
// bound), each as `show(text)` makes it while the source is still at it.
template <class Show>
std::vector<std::string> ReadAllLines(LineSource& source, Show show) {
  std::vector<std::string> lines;
  std::string_view line;
  for (;;) {
    auto kind = source.Next(&line);
    REQUIRE(kind.ok());
    if (*kind == LineSource::Kind::kEnd) return lines;
    lines.push_back(show(*kind == LineSource::Kind::kTooLong ? std::string("<too long>") : std::string(line)));
  }
}

// <repo>/datasets/<relative>: the real data shipped with the repository.
std::string DatasetFile(const std::string& relative);

}  // namespace actorrec::data::readers::testing
