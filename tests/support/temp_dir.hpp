// Scratch files for tests: a fresh directory removed with its contents at
// the end, and whole-file reads and writes. Every test area uses these.
#pragma once

#include <string>

namespace actorrec::testing {

// A new empty directory under $TMPDIR (or /tmp), made with mkdtemp so that
// parallel test processes never share one; removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to path()/name (creating folders) and returns that path.
  std::string Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// Whole files, binary; a failure fails the test naming the path.
void WriteBytes(const std::string& path, const std::string& bytes);
std::string ReadBytes(const std::string& path);

}  // namespace actorrec::testing
