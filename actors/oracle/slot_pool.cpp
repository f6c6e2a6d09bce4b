// Quarantine release of SlotPool.
#include "actors/oracle/slot_pool.hpp"

#include <algorithm>

namespace actorrec::oracle {

SlotPool::SlotPool(uint32_t first, uint32_t capacity, uint32_t lookahead)
    : first_(first), capacity_(capacity), quarantine_(size_t{lookahead} + 1) {}

void SlotPool::BeginBatch(uint64_t b) {
  auto& released = quarantine_[b % quarantine_.size()];
  free_.insert(free_.end(), released.begin(), released.end());
  released.clear();
}

void SlotPool::KeepOnly(const std::vector<uint32_t>& held) {
  std::vector<bool> taken(capacity_, false);
  for (uint32_t s : held) taken[s - first_] = true;
  free_.clear();
  for (uint32_t i = capacity_; i-- > 0;) {
    if (!taken[i]) free_.push_back(first_ + i);
  }
  fresh_ = capacity_;
  for (auto& q : quarantine_) q.clear();
}

uint32_t SlotPool::quarantined() const {
  size_t n = 0;
  for (const auto& q : quarantine_) n += q.size();
  return static_cast<uint32_t>(n);
}

}  // namespace actorrec::oracle
