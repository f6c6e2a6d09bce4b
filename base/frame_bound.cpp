// The BASP frame bound: a header parser that only reads the length.
#include "base/frame_bound.hpp"

#include <algorithm>
#include <cstring>

namespace actorrec {

std::optional<std::string> FrameBound::Feed(const char* data, size_t n) {
  while (n > 0) {
    if (payload_left_ > 0) {
      const size_t skip = static_cast<size_t>(std::min<uint64_t>(payload_left_, n));
      payload_left_ -= skip;
      data += skip;
      n -= skip;
      continue;
    }
    const size_t take = std::min(kHeaderBytes - in_header_, n);
    std::memcpy(header_ + in_header_, data, take);
    in_header_ += take;
    data += take;
    n -= take;
    if (in_header_ < kHeaderBytes) break;
    in_header_ = 0;
    ++frames_;
    const unsigned char* p = header_ + kLengthOffset;
    const uint64_t len = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | uint64_t{p[3]};
    largest_ = std::max(largest_, len);
    if (len > max_) {
      return "a message of " + std::to_string(len) + " bytes announced, above the limit of " + std::to_string(max_);
    }
    payload_left_ = len;
  }
  return std::nullopt;
}

}  // namespace actorrec
