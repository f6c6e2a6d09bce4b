#include "gpu/input_schedule.hpp"

#include "base/status.hpp"

namespace actorrec::gpu {

std::optional<size_t> InputSchedule::SetOf(int64_t batch) const {
  for (size_t s = 0; s < kSets; ++s) {
    if (sets_[s].batch == batch) return s;
  }
  return std::nullopt;
}

std::optional<size_t> InputSchedule::FreeSet(int64_t batch) const {
  if (batch < 0 || SetOf(batch)) return std::nullopt;
  for (size_t s = 0; s < kSets; ++s) {
    if (sets_[s].batch < 0) return s;
  }
  return std::nullopt;
}

void InputSchedule::Staged(int64_t batch, size_t set, uint64_t ticket) {
  ACTORREC_ASSERT(FreeSet(batch) == set, "inputs staged into a set that is not free");
  sets_[set] = {batch, ticket};
}

uint64_t InputSchedule::ComputeWaitsOn(int64_t batch) const {
  const auto set = SetOf(batch);
  ACTORREC_ASSERT(set.has_value(), "a batch's compute waits for inputs never staged");
  return sets_[*set].ticket;
}

void InputSchedule::Computed(int64_t batch) {
  for (Entry& e : sets_) {
    if (e.batch >= 0 && e.batch <= batch) e = Entry{};
  }
}

size_t InputSchedule::taken() const {
  size_t n = 0;
  for (const Entry& e : sets_) n += e.batch >= 0;
  return n;
}

}  // namespace actorrec::gpu
