// Keyed digests used by the cluster handshake (HMAC-SHA256, from libcrypto).
//
// The cluster secret never crosses the network: a joining node proves it knows
// the secret by returning HMAC(secret, nonce ‖ member) for a nonce the
// supervisor chose. Comparison is constant-time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace actorrec {

// 32-byte HMAC-SHA256 of `data` under `key`, as raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// Constant-time equality for digests.
bool DigestEquals(std::string_view a, std::string_view b);

// `n` bytes from the operating system's random source, for nonces.
std::string RandomBytes(size_t n);

// Lower-case hex of raw bytes, for logs and config digests.
std::string ToHex(std::string_view bytes);

}  // namespace actorrec
