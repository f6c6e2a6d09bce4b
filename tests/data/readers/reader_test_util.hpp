// Scratch directories, file writing and draining helpers for the reader tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::readers::testing {

// A fresh directory under the temp dir (mkdtemp), removed at the end.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string File(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

void WriteBytes(const std::string& path, const std::string& bytes);
std::string ReadBytes(const std::string& path);

// Everything a reader yields, read `block` samples at a time, and the status
// that ended it (Ok at a clean end).
struct Drained {
  SampleBlock samples;
  Status status;
  size_t calls = 0;
};
Drained Drain(SampleReader& reader, size_t block = 7);

// <repo>/../shared/data/<relative>, where CI clones shared/ beside the repo.
std::string SharedData(const std::string& relative);

}  // namespace actorrec::data::readers::testing
