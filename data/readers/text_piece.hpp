// TextPiece: a part of a text file that can be read on its own, so that one
// big file (Criteo Kaggle's train.txt: 11 GB) is parsed on several threads.
//
// The rule (the one Hadoop's line input uses): a plain file of S bytes cut
// every `piece_bytes` bytes gives pieces [k·P, (k+1)·P); piece k reads the
// lines that *start* inside its range: it skips the partial line it begins
// in (piece 0 does not) and reads its last line to the end even past the
// range. So every line belongs to exactly one piece, whatever P is, and the
// pieces read one after another give the file's lines in order.
//
// Line numbers: a piece knows its lines' numbers within itself; the number
// of lines before it is counted only when a message needs one (an error or
// a skipped record), from a NewlineIndex shared by the file's pieces, which
// counts each block of the file at most once.
//
// A compressed file is one piece: a gzip or zstd stream cannot be started
// in the middle.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace actorrec::data::readers {

// 64 MiB: a few hundred thousand Criteo lines, far more than the per-piece
// costs (a scratch part, a seek) and small enough for 170 pieces of Kaggle.
inline constexpr uint64_t kDefaultPieceBytes = uint64_t{64} << 20;
// A piece's `end` when it reads to the end of the file.
inline constexpr uint64_t kToTheEnd = std::numeric_limits<uint64_t>::max();

// Counts the newlines of a plain file before an offset, block by block, each
// block once; thread-safe.
class NewlineIndex {
 public:
  NewlineIndex(std::string path, uint64_t block_bytes) : path_(std::move(path)), block_bytes_(block_bytes) {}
  // Newlines in bytes [0, offset); nullopt when the file cannot be read.
  std::optional<uint64_t> Before(uint64_t offset);

 private:
  std::optional<uint64_t> Count(uint64_t begin, uint64_t end) const;

  std::string path_;
  uint64_t block_bytes_;
  std::mutex mutex_;
  std::vector<uint64_t> block_counts_;  // of blocks 0 … size−1, counted so far in order
};

struct TextPiece {
  std::string path;
  uint64_t begin = 0;  // the range whose lines this piece reads
  uint64_t end = kToTheEnd;
  // For pieces after the first; shared by the file's pieces.
  std::shared_ptr<NewlineIndex> lines;

  bool first() const { return begin == 0; }  // reads the header, if any
  bool last() const { return end == kToTheEnd; }

  static TextPiece WholeFile(std::string path) { return TextPiece{std::move(path), 0, kToTheEnd, nullptr}; }
};

// `path` as pieces of about `piece_bytes` (the whole file as one piece when
// it is compressed, or not larger than that).
Result<std::vector<TextPiece>> SplitIntoPieces(const std::string& path, uint64_t piece_bytes);

// The pieces of every path, in order.
Result<std::vector<TextPiece>> SplitIntoPieces(const std::vector<std::string>& paths, uint64_t piece_bytes);

}  // namespace actorrec::data::readers
