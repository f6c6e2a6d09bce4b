// Content digests (XXH3) for file checksums and config identity.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace actorrec {

// XXH3-64 of `bytes`: fast, stable across machines and builds of xxhash 0.8.
uint64_t Digest64(std::string_view bytes, uint64_t seed = 0);

// The same digest as 16 lower-case hex digits.
std::string Digest64Hex(std::string_view bytes);

// A 64-bit digest as 16 lower-case hex digits, leading zeros kept, so that
// tools can compare digests as fixed-width strings.
std::string Hex64(uint64_t value);

}  // namespace actorrec
