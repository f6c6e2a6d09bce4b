// A bounded ring of staging memory (pinned on a device: gpu::Backend::
// AllocatePinned) that copies to and from a device read asynchronously.
// Plain bookkeeping, no memory of its own: which range of the ring a copy
// may use next, and which earlier copy must have finished reading it first.
//
// Invariants:
//  (1) Spans are handed out in ring order from offset 0, each contiguous: a
//      span that would pass the end starts again at 0 (wrap-around), the
//      floats skipped at the end stay unused until the next lap.
//  (2) A committed span is busy until the copy that reads it is done; the
//      copy is named by a ticket (gpu::Backend::ScatterSlots' return; 0:
//      already done). Reserve returns the newest ticket among the busy spans
//      the new one overlaps: the caller waits for it (WaitStaged) before
//      writing, so memory is reused only after its copy's event. Copies on
//      one stream finish in ticket order, so waiting for the newest one
//      frees every older one too.
//  (3) A span larger than the ring is an error naming both sizes, never a
//      silent overwrite.
// Not thread-safe (one trainer's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "base/status.hpp"

namespace actorrec::gpu {

class StagingRing {
 public:
  explicit StagingRing(size_t capacity) : capacity_(capacity) {}

  struct Span {
    size_t offset = 0;     // in floats, from the ring's start
    uint64_t wait_for = 0; // the ticket to wait for before writing; 0: none
  };

  size_t capacity() const { return capacity_; }
  // Busy spans (committed, their copy not known to be done).
  size_t busy() const { return busy_.size(); }

  // The next `floats` of the ring (invariant (1)), and what to wait for.
  // InvalidArgument naming both sizes when floats > capacity().
  Result<Span> Reserve(size_t floats);
  // The span at `offset` (floats long, from the last Reserve) is read by the
  // copy of `ticket` (0: already read, free at once).
  void Commit(size_t offset, size_t floats, uint64_t ticket);
  // Every copy up to `ticket` is done: its spans are free.
  void Done(uint64_t ticket);

 private:
  struct Busy {
    size_t begin, end;
    uint64_t ticket;
  };
  size_t capacity_;
  size_t head_ = 0;         // where the next span starts, unless it wraps
  std::deque<Busy> busy_;   // in commit order
};

}  // namespace actorrec::gpu
