// DecodedFile: the bytes of a text file, decompressed on the fly when it is
// gzip or zstd compressed, recognized by its first bytes (not by its name,
// so a renamed file still reads right): 1f 8b is gzip (zlib's inflate, every
// member of a multi-member file, as `zcat` reads Criteo Terabyte's
// day_N.gz), 28 b5 2f fd is zstd (every frame). Anything else is read as
// it is. Memory is bounded: one input buffer and the decoder's state.
//
// A corrupt or truncated stream is an IoError naming the file, the format
// and the decoder's reason, never silently shorter data. Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {

class DecodedFile {
 public:
  enum class Encoding { kPlain, kGzip, kZstd };

  static Result<DecodedFile> Open(const std::string& path);
  DecodedFile(DecodedFile&&) noexcept;
  DecodedFile& operator=(DecodedFile&&) noexcept;
  ~DecodedFile();

  const std::string& path() const;
  Encoding encoding() const;
  // Reads up to `n` decoded bytes; *got == 0 only at the end of the data.
  Status Read(char* buf, size_t n, size_t* got);
  // Plain files only, before the first Read: the next Read starts at byte
  // `offset`. A compressed stream cannot start in the middle (InvalidArgument).
  Status SkipTo(uint64_t offset);

 private:
  struct Decoder;
  explicit DecodedFile(std::unique_ptr<Decoder> decoder);
  std::unique_ptr<Decoder> decoder_;
};

// "gzip", "zstd" or "plain".
const char* EncodingName(DecodedFile::Encoding encoding);

}  // namespace actorrec::data::readers
