// Thin POSIX file helpers for the readers: an owned descriptor, full reads
// at an offset, and atomic whole-file replacement.
//
// Errors are IoError statuses naming the path and strerror(errno); none of
// these functions throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.hpp"

namespace actorrec::data::readers {

// Owns a read-only file descriptor; move-only.
class ReadFile {
 public:
  static Result<ReadFile> Open(const std::string& path);

  ReadFile(ReadFile&& other) noexcept : fd_(other.fd_), size_(other.size_), path_(std::move(other.path_)) {
    other.fd_ = -1;
  }
  ReadFile& operator=(ReadFile&& other) noexcept;
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;
  ~ReadFile();

  const std::string& path() const { return path_; }
  // The size when opened (fstat); readers treat the file as immutable.
  uint64_t size() const { return size_; }

  // Reads up to `n` bytes at the current position; *got == 0 at the end.
  Status Read(char* buf, size_t n, size_t* got);
  // Moves the current position to `offset` bytes from the start.
  Status Seek(uint64_t offset);
  // Reads exactly `n` bytes at `offset`; fewer is an IoError (the file shrank).
  Status ReadAt(uint64_t offset, char* buf, size_t n) const;

 private:
  ReadFile(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// Replaces `path` with `bytes` so that a crash leaves either the old file or
// the new one, never a torn mix: write a temporary beside it, fsync it,
// rename it over `path`, then fsync the directory so the rename is durable.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// The whole file; for small files such as a saved mapping.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace actorrec::data::readers
