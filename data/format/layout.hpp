// The byte layout of actorrec's columnar dataset file, and its header codec.
//
// Format version 1. All integers are unsigned little-endian, floats are
// IEEE-754 binary32 little-endian. Every region and every column starts at a
// multiple of 8 bytes from the start of the file, so a reader can use the
// mmap'ed columns in place (mmap returns page-aligned memory). All padding
// bytes are zero and are covered by the checksums. Checksums are XXH3-64.
//
//   file := header | chunk 0 | ... | chunk C-1 | index | footer
//   C = ceil(num_samples / S), 0 for an empty dataset.
//
// Header, H bytes (H a multiple of 8):
//   0     8  magic 89 'A' 'R' 'D' 0D 0A 1A 0A (PNG's trick: the high byte
//            catches 7-bit transfers, CR LF catches newline translation)
//   8     4  format version (1)
//   12    4  H: header bytes, its checksum included
//   16    8  file bytes: the size of the whole file (catches truncation)
//   24    8  num_samples
//   32    4  S: samples per chunk, > 0
//   36    4  D: dense features
//   40    4  T: tables
//   44    4  reserved, 0
//   48       D dense entries, each: 4 name length L | L bytes of name |
//            zero padding to a multiple of 8
//            T table entries, each: 8 rows (cardinality: ids are < rows) |
//            4 flags (bit 0 set: multi-hot; other bits 0) | 4 name length L |
//            L bytes of name | zero padding to a multiple of 8
//   H-8   8  checksum of bytes [0, H-8), seed 0
//
// Chunk c holds samples [c*S, min((c+1)*S, num_samples)), m of them. Its
// columns follow each other, each zero-padded to a multiple of 8 bytes:
//   labels    m f32
//   dense     m*D f32, row-major: sample i's features are [i*D, (i+1)*D)
//   then per table, in header order:
//     offsets (multi-hot tables only): m+1 u32, offsets[0] = 0, non-
//             decreasing; sample i's ids are values[offsets[i], offsets[i+1])
//     values  u32 row ids: m of them for a single-hot table (sample i's id is
//             values[i]: exactly one id per sample, so no offsets), offsets[m]
//             of them for a multi-hot one
//   checksum  8: of the chunk's bytes before it, seed c (so a chunk written
//             or indexed at the wrong place fails too)
//
// Index, 16*C bytes: per chunk, 8 offset of the chunk from the file start |
//   8 chunk bytes (checksum included). Chunks are contiguous from H on.
//
// Footer, the file's last 32 bytes:
//   0     8  index offset
//   8     8  C: chunk count
//   16    8  checksum of the index, seed 0
//   24    8  checksum of footer bytes [0, 24), seed 0
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/sample_block.hpp"

static_assert(std::endian::native == std::endian::little,
              "the dataset format is little-endian and is used in place through mmap: port the codec first");

namespace actorrec::data::format {

inline constexpr char kMagic[8] = {'\x89', 'A', 'R', 'D', '\r', '\n', '\x1a', '\n'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kHeaderFixedBytes = 48;
inline constexpr size_t kChecksumBytes = 8;
inline constexpr size_t kIndexEntryBytes = 16;
inline constexpr size_t kFooterBytes = 32;
inline constexpr uint32_t kMultiHotFlag = 1;

constexpr uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// What the header says.
struct HeaderInfo {
  DatasetSchema schema;
  std::vector<bool> multi_hot;  // per table
  uint64_t num_samples = 0;
  uint32_t samples_per_chunk = 1;
  uint64_t file_bytes = 0;
  uint32_t header_bytes = 0;  // H; EncodeHeader fills it in

  uint64_t num_chunks() const { return (num_samples + samples_per_chunk - 1) / samples_per_chunk; }
  // Samples in chunk c.
  uint32_t chunk_size(uint64_t c) const;
};

// H for `schema`: it depends on the names only, so a writer can reserve the
// header before it knows the sample count.
uint32_t HeaderBytes(const DatasetSchema& schema);

// The header bytes of `info` (H of them, checksum included).
std::string EncodeHeader(const HeaderInfo& info);

// Parses and checks the header at the start of `file` (the whole mapped
// file). Errors name `path`: "not an actorrec dataset", a newer version,
// truncation, a checksum mismatch.
Result<HeaderInfo> ParseHeader(std::string_view file, const std::string& path);

}  // namespace actorrec::data::format
