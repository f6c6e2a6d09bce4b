// Bounds the frames of CAF's BASP protocol (0.17) in a decrypted byte stream,
// before CAF allocates a buffer for them.
//
// BASP sends a 32-byte header, then the payload its length field announces.
// CAF's broker resizes its read buffer to that length as soon as it has the
// header (2 GiB for a forged header), so the transport feeds every byte it
// decrypts through a FrameBound first and drops the connection when a
// header announces more than the limit. The broker reads exactly this
// sequence (a header it finds invalid closes the connection), so the bound
// never loses track of where frames start.
//
// Header layout (caf/io/basp/header.hpp, serialized by CAF's
// binary_serializer in network byte order): operation (1), two padding
// bytes, flags (1), payload_len (4, big-endian), operation_data (8),
// source_actor (8), dest_actor (8). tests/base/frame_bound_test.cpp checks
// this against CAF's own serializer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace actorrec {

class FrameBound {
 public:
  static constexpr size_t kHeaderBytes = 32;
  static constexpr size_t kLengthOffset = 4;

  explicit FrameBound(uint64_t max_payload_bytes) : max_(max_payload_bytes) {}

  // Takes the next `n` bytes of the stream. Returns why the stream must be
  // dropped (a frame announcing more than the limit), or nothing.
  std::optional<std::string> Feed(const char* data, size_t n);

  // Frames whose header has been read whole.
  uint64_t frames() const { return frames_; }
  // The largest payload announced so far.
  uint64_t largest() const { return largest_; }

 private:
  uint64_t max_;
  unsigned char header_[kHeaderBytes] = {};
  size_t in_header_ = 0;     // header bytes collected
  uint64_t payload_left_ = 0;  // payload bytes still to pass
  uint64_t frames_ = 0;
  uint64_t largest_ = 0;
};

}  // namespace actorrec
