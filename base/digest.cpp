// XXH3 digests.
#include "base/digest.hpp"

#include <xxhash.h>

#include <cstdio>

namespace actorrec {

uint64_t Digest64(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

std::string Digest64Hex(std::string_view bytes) { return Hex64(Digest64(bytes)); }

std::string Hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace actorrec
