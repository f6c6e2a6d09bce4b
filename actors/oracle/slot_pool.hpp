// SlotPool: the free slots of one cache partition, with the quarantine that
// keeps a freed slot unused until its write-back has surely read it.
//
// Invariants:
//  (1) A slot retired after batch e is handed out again only when batch
//      e + L + 1 or later is planned. The prefetch of such a batch is served
//      only after every write-back of batches <= e is acknowledged (the
//      barrier), so nothing lands in a slot before the write-back of the row
//      that left it has read it.
//  (2) in_use() counts slots taken and not yet released, quarantined ones
//      included; it never exceeds the capacity.
//  (3) Free slots are reused last-retired first, fresh slots in ascending
//      order: the slot sequence depends only on the calls, so two oracles
//      given the same batches assign the same slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace actorrec::oracle {

class SlotPool {
 public:
  // Slots [first, first + capacity); `lookahead` is L.
  SlotPool(uint32_t first, uint32_t capacity, uint32_t lookahead);

  // Releases the slots retired after batch b − L − 1. Call once per batch,
  // before its Take() calls.
  void BeginBatch(uint64_t b);

  // A free slot, or false when all `capacity` are in use.
  bool Take(uint32_t* slot) {
    if (!free_.empty()) {
      *slot = free_.back();
      free_.pop_back();
      return true;
    }
    if (fresh_ == capacity_) return false;
    *slot = first_ + fresh_++;
    return true;
  }

  // Frees slots[0 … n) after batch b, through the quarantine (invariant 1).
  void Retire(uint64_t b, const uint32_t* slots, size_t n) {
    auto& q = quarantine_[b % quarantine_.size()];
    q.insert(q.end(), slots, slots + n);
  }

  // Frees every slot but `held`, quarantined ones too: for a batch whose
  // barrier is b − 1 (every earlier write-back is acknowledged before its
  // prefetch lands), which ends the window early (LookaheadCore's flush).
  // Free slots are then handed out in ascending order.
  void KeepOnly(const std::vector<uint32_t>& held);

  uint32_t in_use() const { return fresh_ - static_cast<uint32_t>(free_.size()); }
  // Of in_use(), the slots in quarantine (retired, not yet released).
  uint32_t quarantined() const;
  // The most slots ever in use at once (fresh slots are taken only when no
  // freed one is left).
  uint32_t peak() const { return fresh_; }
  uint32_t capacity() const { return capacity_; }

 private:
  uint32_t first_;
  uint32_t capacity_;
  uint32_t fresh_ = 0;  // slots first_ … first_ + fresh_ − 1 have been handed out
  std::vector<uint32_t> free_;
  // quarantine_[e mod (L + 1)]: slots retired after batch e, released by
  // BeginBatch(e + L + 1).
  std::vector<std::vector<uint32_t>> quarantine_;
};

}  // namespace actorrec::oracle
