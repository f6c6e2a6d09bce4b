// BatchSet: the distinct keys seen in the current batch, cleared in O(1) per
// batch. Open addressing with linear probing over a power-of-two table; each
// slot carries the number of the batch that wrote it, so a new batch starts
// by bumping that number instead of clearing the table.
//
// Sized by the largest batch seen (twice its distinct keys, at least), not
// by the table's cardinality: a 4096-sample batch of a 10 M-row table needs
// 128 KiB, which stays in cache.
#pragma once

#include <cstdint>
#include <vector>

namespace actorrec::data::stats {

class BatchSet {
 public:
  BatchSet() { Resize(kMinSlots); }

  // Inserts `key` into the current batch's set; true if it was not there.
  bool Insert(uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) Resize(2 * slots_.size());
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (e.batch != batch_) {
        e = {key, batch_};
        ++size_;
        return true;
      }
      if (e.key == key) return false;
    }
  }

  // Distinct keys in the current batch.
  size_t size() const { return size_; }

  // Starts the next batch with an empty set.
  void NextBatch() {
    size_ = 0;
    if (++batch_ == 0) Resize(slots_.size());  // after 2^32 batches: clear for real
  }

 private:
  static constexpr size_t kMinSlots = 1024;
  struct Entry {
    uint64_t key;
    uint32_t batch;  // the batch that wrote it; 0 is never a live batch
  };

  size_t Slot(uint64_t key) const {
    // Fibonacci hashing: row ids are often dense, consecutive values.
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  // Rehashes the current batch's keys into `slots` slots.
  void Resize(size_t slots) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.assign(slots, Entry{0, 0});
    mask_ = slots - 1;
    shift_ = 64;
    for (size_t s = slots; s > 1; s >>= 1) --shift_;
    if (batch_ == 0) batch_ = 1;
    const bool live = size_ > 0;  // NextBatch empties the set before a clearing resize
    size_ = 0;
    if (!live) return;
    for (const Entry& e : old)
      if (e.batch == batch_) Insert(e.key);
  }

  std::vector<Entry> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  uint32_t batch_ = 1;
  size_t size_ = 0;
};

}  // namespace actorrec::data::stats
