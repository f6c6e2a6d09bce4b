// Which copy each batch's compute waits for on a device, as data (the
// trainer's cache slots, actors/trainer/slot_array.hpp; docs/gpu.md).
//
// Rows fetched for batch b are scattered into their slots by copies on the
// copy stream, each named by a ticket (gpu::Backend::ScatterSlots; tickets
// rise). The compute of b waits for the newest ticket of b's own scatters
// and no other: a prefetch for b+1 … b+k that is already on the copy stream
// never delays b. The other direction needs no event: the write-back of
// b−1's evictions is gathered (Backend::GatherSlots) before its rows leave
// for the shards, and a fetch that reuses those slots is served only after
// the shards acknowledged them (the plan's barrier), so the gather of b−1
// is always done before the slots take new rows.
// Not thread-safe: its owner locks (SlotArray).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace actorrec::gpu {

class CopySchedule {
 public:
  // A scatter of batch's rows was enqueued with `ticket` (0: already done).
  void Staged(int64_t batch, uint64_t ticket);
  // The ticket the compute of `batch` waits for: the newest of its own
  // scatters, 0 when it has none left to wait for.
  uint64_t ComputeWaitsOn(int64_t batch) const;
  // The compute of `batch` waits (is enqueued): its entry and every older
  // one are forgotten.
  void Computed(int64_t batch);
  // Batches with scatters not yet waited for.
  size_t pending() const { return newest_.size(); }

 private:
  std::map<int64_t, uint64_t> newest_;  // batch -> newest ticket
};

}  // namespace actorrec::gpu
