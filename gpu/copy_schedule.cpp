#include "gpu/copy_schedule.hpp"

#include <algorithm>

namespace actorrec::gpu {

void CopySchedule::Staged(int64_t batch, uint64_t ticket) {
  if (ticket == 0) return;
  uint64_t& t = newest_[batch];
  t = std::max(t, ticket);
}

uint64_t CopySchedule::ComputeWaitsOn(int64_t batch) const {
  auto it = newest_.find(batch);
  return it == newest_.end() ? 0 : it->second;
}

void CopySchedule::Computed(int64_t batch) { newest_.erase(newest_.begin(), newest_.upper_bound(batch)); }

}  // namespace actorrec::gpu
