// SourceFile: the identity of a file a categorical mapping was built from,
// kept in the mapping so that one built from other data is refused instead
// of reused. Reusing another file's dictionary is silent and ruinous: nearly
// every value of this data is then unknown to it and maps to the rare row.
//
// Identity is the size and an XXH3-64 of the first MiB, not a digest of the
// whole file: that would read all of a 45 GB Criteo day on every start.
// Another file, a truncated or an appended copy all change it; an edit in
// the middle that keeps the size does not. The path is kept for messages
// only: a moved or copied file is the same data.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace actorrec::data::readers {

// Bytes of a file's head that its identity digests.
inline constexpr uint64_t kIdentityHeadBytes = uint64_t{1} << 20;

struct SourceFile {
  std::string path;      // as given when the mapping was built
  uint64_t bytes = 0;    // the file's size
  uint64_t head = 0;     // XXH3-64 of its first kIdentityHeadBytes (all of it if shorter)

  bool SameData(const SourceFile& other) const { return bytes == other.bytes && head == other.head; }
};

// Opens `path` and reads its head; an IoError names the file.
Result<SourceFile> IdentifyFile(const std::string& path);

// "data/train.txt (1234 bytes, first-MiB digest 0123456789abcdef)".
std::string Describe(const SourceFile& file);

}  // namespace actorrec::data::readers
