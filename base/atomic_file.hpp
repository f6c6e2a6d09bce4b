// Atomic file replacement: a reader of PATH sees either the old file or the
// complete new one, never a half-written one, even across a crash.
//
// The recipe (write, fsync, rename, fsync the directory):
// (1) Bytes go to a temporary sibling PATH.tmp.<pid> (same directory, so the
//     rename cannot cross file systems; the pid keeps two processes writing
//     the same checkpoint from sharing a temporary).
// (2) Commit() fsyncs the temporary, closes it, renames it over PATH and
//     fsyncs the directory so that the rename itself is durable.
// (3) On any failure, and when a writer is destroyed without Commit(), the
//     temporary is removed and PATH is left exactly as it was.
// (4) Errors are sticky and name the path and the errno text: after one,
//     every call returns it.
// Not thread-safe: one thread writes one file. Two threads of one process
// must not write the same PATH at the same time (they would share the
// temporary).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.hpp"

namespace actorrec {

class AtomicFileWriter {
 public:
  // Creates (truncates) the temporary for `path`. IoError naming it when the
  // directory is missing or not writable.
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends `bytes` at the end of what was written so far.
  Status Write(std::string_view bytes);
  // Overwrites bytes already written at `offset` (for a header whose
  // content is known only at the end); does not move the append position.
  // REQUIRES: offset + bytes.size() <= bytes_written().
  Status WriteAt(uint64_t offset, std::string_view bytes);
  // Makes the file durable at `path` (see (2)). Once only.
  Status Commit();

  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, int fd);
  Status Fail(Status status);

  const std::string path_;
  const std::string temp_path_;
  int fd_;
  uint64_t bytes_written_ = 0;
  Status status_;
  bool committed_ = false;
};

// The temporary that AtomicFileWriter uses for `path` in this process.
std::string AtomicTempPath(const std::string& path);

// Runs `write` on a fresh writer for `path` and commits if it returns Ok; an
// error from `write` is returned as is and leaves `path` untouched.
Status WriteFileAtomically(const std::string& path, const std::function<Status(AtomicFileWriter&)>& write);

// Replaces `path` with exactly `bytes`.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace actorrec
