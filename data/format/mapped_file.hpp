// A read-only memory map of a whole file.
#pragma once

#include <string>
#include <string_view>

#include "base/status.hpp"

namespace actorrec::data::format {

// Owns a private read-only mapping; move-only. An empty file maps to empty
// bytes (mmap refuses length 0).
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Page-aligned, valid while this object lives.
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace actorrec::data::format
