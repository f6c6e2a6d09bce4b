// Quarantine release of SlotPool.
#include "actors/oracle/slot_pool.hpp"

namespace actorrec::oracle {

SlotPool::SlotPool(uint32_t first, uint32_t capacity, uint32_t lookahead)
    : first_(first), capacity_(capacity), quarantine_(size_t{lookahead} + 1) {}

void SlotPool::BeginBatch(uint64_t b) {
  auto& released = quarantine_[b % quarantine_.size()];
  free_.insert(free_.end(), released.begin(), released.end());
  released.clear();
}

}  // namespace actorrec::oracle
