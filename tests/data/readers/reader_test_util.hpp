// Scratch directories, file writing and draining helpers for the reader tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.hpp"
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

// <repo>/datasets/<relative>: the real data shipped with the repository.
std::string DatasetFile(const std::string& relative);

}  // namespace actorrec::data::readers::testing
