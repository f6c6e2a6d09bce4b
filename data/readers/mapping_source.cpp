// Identifying a mapping's source files.
#include "data/readers/mapping_source.hpp"

#include <algorithm>

#include "base/digest.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {

Result<SourceFile> IdentifyFile(const std::string& path) {
  auto file = ReadFile::Open(path);
  if (!file.ok()) return file.status();
  SourceFile id;
  id.path = path;
  id.bytes = file->size();
  std::string head(static_cast<size_t>(std::min(id.bytes, kIdentityHeadBytes)), '\0');
  if (Status s = file->ReadAt(0, head.data(), head.size()); !s.ok()) return s;
  id.head = Digest64(head);
  return id;
}

std::string Describe(const SourceFile& file) {
  return file.path + " (" + std::to_string(file.bytes) + " bytes, first-MiB digest " + Hex64(file.head) + ")";
}

}  // namespace actorrec::data::readers
