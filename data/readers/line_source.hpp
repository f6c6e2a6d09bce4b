// LineSource: the lines of one text file, read in large chunks with bounded
// memory; a gzip or zstd file is decompressed on the way (decoded_file.hpp).
//
// The file is read kDefaultChunkBytes at a time into one buffer; a partial
// line at the end of a chunk is carried over to the front before the next
// read, so memory is chunk + longest allowed line whatever the file size.
// A line longer than the limit is reported as kTooLong (the reader decides
// what that means) and its bytes are discarded up to the next newline.
// A last line without a trailing newline is returned like any other, and a
// "\r\n" ending loses its '\r'. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/decoded_file.hpp"

namespace actorrec::data::readers {

// 4 MiB amortizes the read() system call to nothing while staying well
// inside L3-and-page-cache friendly sizes; larger chunks measured no faster.
inline constexpr size_t kDefaultChunkBytes = size_t{4} << 20;
// Longest accepted line. Criteo lines are ~200 bytes and Avazu ~150; a
// 1 MiB "line" means a binary or wrongly split file, not data.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

class LineSource {
 public:
  enum class Kind { kLine, kTooLong, kEnd };

  // Opens `path` and reads its first chunk. An empty file is an
  // InvalidArgument "file is empty": zero samples from a file that should
  // have data is almost always a failed copy.
  static Result<LineSource> Open(const std::string& path, size_t chunk_bytes = kDefaultChunkBytes,
                                 size_t max_line_bytes = kMaxLineBytes);

  // The next line (without its newline) in *line, valid until the next call.
  // kTooLong: the line exceeded max_line_bytes; *line is empty.
  Result<Kind> Next(std::string_view* line);

  // 1-based number of the line last returned.
  uint64_t line_number() const { return line_number_; }
  const std::string& path() const { return file_.path(); }
  // "path:line", the prefix of every message about the current line.
  std::string Where() const { return path() + ":" + std::to_string(line_number_); }

 private:
  LineSource(DecodedFile file, size_t chunk_bytes, size_t max_line_bytes);
  // Moves the unread tail to the front and appends one more chunk.
  Status Refill();
  // Drops bytes up to and including the next newline (or the end).
  Status DiscardRestOfLine();

  DecodedFile file_;
  size_t chunk_bytes_;
  size_t max_line_bytes_;
  std::vector<char> buf_;  // chunk_bytes + max_line_bytes
  size_t begin_ = 0;       // unread bytes are buf_[begin_, end_)
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace actorrec::data::readers
