// Which input set each batch's inputs are uploaded into ahead of its
// compute, and which copy its compute waits for, as data (the trainer's
// inputs on a device, actors/trainer/trainer_core.hpp; docs/gpu.md "A
// batch's inputs go up ahead").
//
// A batch's inputs (its dense rows and labels) go up on the copy stream
// into one of kSets device buffers, each named by the copy's ticket
// (gpu::Backend::UploadInputs), while an earlier batch computes. The
// compute of b waits for the ticket of b's own inputs and no other copy.
// A set is taken from the upload of its batch until that batch's backward
// has returned on the host: the backward ends with a download that waits
// for every op the compute stream ran before it, so nothing reads the set
// after that and the next upload into it needs no event. With two sets,
// batch b+1's inputs go up while b computes, and b+2's wait for b's end.
// Not thread-safe: one trainer's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace actorrec::gpu {

class InputSchedule {
 public:
  static constexpr size_t kSets = 2;

  // The set `batch`'s inputs are in, if they were staged.
  std::optional<size_t> SetOf(int64_t batch) const;
  // The set `batch`'s inputs may go into now: nullopt when they are staged
  // already or no set is free.
  std::optional<size_t> FreeSet(int64_t batch) const;
  // `batch`'s inputs went up into `set` with `ticket` (0: already there).
  // REQUIRES: set == FreeSet(batch).
  void Staged(int64_t batch, size_t set, uint64_t ticket);
  // The ticket the compute of a staged `batch` waits for.
  uint64_t ComputeWaitsOn(int64_t batch) const;
  // `batch`'s backward returned: its set is free. A set holding an older
  // batch (staged, never computed: a run that stopped) is freed too.
  void Computed(int64_t batch);
  // Sets taken.
  size_t taken() const;

 private:
  struct Entry {
    int64_t batch = -1;  // -1: free
    uint64_t ticket = 0;
  };
  std::array<Entry, kSets> sets_;
};

}  // namespace actorrec::gpu
