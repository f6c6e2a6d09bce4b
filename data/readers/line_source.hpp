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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/decoded_file.hpp"
#include "data/readers/text_piece.hpp"

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
  // The lines of one piece (text_piece.hpp): those that start in its range.
  // Only a piece that starts the file may not be empty.
  static Result<LineSource> Open(const TextPiece& piece, size_t chunk_bytes = kDefaultChunkBytes,
                                 size_t max_line_bytes = kMaxLineBytes);

  // The next line (without its newline) in *line, valid until the next call.
  // kTooLong: the line exceeded max_line_bytes; *line is empty.
  Result<Kind> Next(std::string_view* line);

  // After kEnd of a piece: Next() goes on with the lines after its range,
  // for a reader that must know whether more data follows.
  void ReadPastEnd() { end_offset_ = kToTheEnd; }

  // 1-based number of the line last returned, counted within this source
  // (a piece's first line is 1).
  uint64_t line_number() const { return line_number_; }
  const std::string& path() const { return file_.path(); }
  // "path:line", the prefix of every message about the current line.
  std::string Where() const { return WhereLine(line_number_); }
  // "path:line" for line `line` of this source, numbered in the file (a
  // piece counts the lines before it here, once).
  std::string WhereLine(uint64_t line) const;

 private:
  LineSource(DecodedFile file, size_t chunk_bytes, size_t max_line_bytes);
  // Moves the unread tail to the front and appends one more chunk.
  Status Refill();
  // Drops bytes up to and including the next newline (or the end).
  Status DiscardRestOfLine();

  DecodedFile file_;
  // A piece: lines starting at or after end_offset_ are not its own; the
  // number of lines before its first, counted on demand.
  uint64_t end_offset_ = kToTheEnd;
  uint64_t first_line_offset_ = 0;
  std::shared_ptr<NewlineIndex> lines_before_;
  mutable std::optional<uint64_t> line_base_;
  uint64_t buf_offset_ = 0;  // file offset of buf_[0]
  size_t chunk_bytes_;
  size_t max_line_bytes_;
  // chunk_bytes + max_line_bytes, not zero-filled: a page is touched only
  // when a read reaches it, so opening a small file or piece stays cheap.
  std::unique_ptr<char[]> buf_;
  size_t buf_size_;
  size_t begin_ = 0;       // unread bytes are buf_[begin_, end_)
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace actorrec::data::readers
