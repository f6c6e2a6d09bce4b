#include "gpu/staging_ring.hpp"

#include <algorithm>
#include <string>

namespace actorrec::gpu {

Result<StagingRing::Span> StagingRing::Reserve(size_t floats) {
  if (floats > capacity_) {
    return Status::InvalidArgument("a staged copy of " + std::to_string(floats) +
                                   " floats is larger than the staging ring's " + std::to_string(capacity_) +
                                   " floats");
  }
  Span span;
  span.offset = head_ + floats > capacity_ ? 0 : head_;
  const size_t end = span.offset + floats;
  // Every busy span the new one overlaps must be read first; the newest
  // ticket among them covers the older ones (invariant (2)).
  for (auto it = busy_.begin(); it != busy_.end();) {
    if (floats > 0 && it->begin < end && span.offset < it->end) {
      span.wait_for = std::max(span.wait_for, it->ticket);
      it = busy_.erase(it);
    } else {
      ++it;
    }
  }
  head_ = end;
  return span;
}

void StagingRing::Commit(size_t offset, size_t floats, uint64_t ticket) {
  if (ticket == 0 || floats == 0) return;
  busy_.push_back({offset, offset + floats, ticket});
}

void StagingRing::Done(uint64_t ticket) {
  std::erase_if(busy_, [&](const Busy& b) { return b.ticket <= ticket; });
}

}  // namespace actorrec::gpu
