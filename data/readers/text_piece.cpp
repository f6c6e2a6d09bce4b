// Cutting a plain text file into pieces, and counting lines before one.
#include "data/readers/text_piece.hpp"

#include <algorithm>
#include <cstring>

#include "data/readers/decoded_file.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {

std::optional<uint64_t> NewlineIndex::Count(uint64_t begin, uint64_t end) const {
  auto file = ReadFile::Open(path_);
  if (!file.ok()) return std::nullopt;
  end = std::min(end, file->size());
  std::vector<char> buf(std::min<uint64_t>(uint64_t{1} << 20, std::max<uint64_t>(end - std::min(begin, end), 1)));
  uint64_t newlines = 0;
  for (uint64_t at = begin; at < end;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - at));
    if (!file->ReadAt(at, buf.data(), n).ok()) return std::nullopt;
    newlines += static_cast<uint64_t>(std::count(buf.data(), buf.data() + n, '\n'));
    at += n;
  }
  return newlines;
}

std::optional<uint64_t> NewlineIndex::Before(uint64_t offset) {
  const uint64_t whole_blocks = offset / block_bytes_;
  uint64_t newlines = 0;
  {
    std::lock_guard lock(mutex_);
    while (block_counts_.size() < whole_blocks) {
      const uint64_t b = block_counts_.size();
      auto n = Count(b * block_bytes_, (b + 1) * block_bytes_);
      if (!n) return std::nullopt;
      block_counts_.push_back(*n);
    }
    for (uint64_t b = 0; b < whole_blocks; ++b) newlines += block_counts_[b];
  }
  auto rest = Count(whole_blocks * block_bytes_, offset);
  if (!rest) return std::nullopt;
  return newlines + *rest;
}

Result<std::vector<TextPiece>> SplitIntoPieces(const std::string& path, uint64_t piece_bytes) {
  ACTORREC_ASSERT(piece_bytes > 0, "pieces must have a positive size");
  auto file = DecodedFile::Open(path);
  if (!file.ok()) return file.status();
  auto plain = ReadFile::Open(path);
  if (!plain.ok()) return plain.status();
  const uint64_t size = plain->size();
  if (file->encoding() != DecodedFile::Encoding::kPlain || size <= piece_bytes) {
    return std::vector<TextPiece>{TextPiece::WholeFile(path)};
  }
  auto lines = std::make_shared<NewlineIndex>(path, piece_bytes);
  std::vector<TextPiece> pieces;
  for (uint64_t begin = 0; begin < size; begin += piece_bytes) {
    const bool last = size - begin <= piece_bytes;
    pieces.push_back(TextPiece{path, begin, last ? kToTheEnd : begin + piece_bytes, lines});
  }
  return pieces;
}

Result<std::vector<TextPiece>> SplitIntoPieces(const std::vector<std::string>& paths, uint64_t piece_bytes) {
  std::vector<TextPiece> all;
  for (const auto& path : paths) {
    auto pieces = SplitIntoPieces(path, piece_bytes);
    if (!pieces.ok()) return pieces.status();
    all.insert(all.end(), pieces->begin(), pieces->end());
  }
  return all;
}

}  // namespace actorrec::data::readers
