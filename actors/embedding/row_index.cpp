// The per-table row index: a direct array or an open-addressing hash map.
#include "actors/embedding/row_index.hpp"

#include <algorithm>

#include "base/status.hpp"
#include "data/gen/random.hpp"

namespace actorrec::embedding {
namespace {

// The first hashed capacity: 16 buckets (128 bytes) for a table barely touched.
constexpr int kInitialLog2Buckets = 4;

}  // namespace

RowIndex::RowIndex(uint64_t table_rows) : direct_(table_rows <= kDirectIndexMaxRows) {
  if (direct_) {
    slots_.assign(table_rows, kNoRow);
  } else {
    buckets_.assign(size_t{1} << kInitialLog2Buckets, Bucket{0, kNoRow});
    shift_ = 64 - kInitialLog2Buckets;
  }
}

size_t RowIndex::BucketOf(uint32_t row) const { return static_cast<size_t>(data::gen::Mix64(row) >> shift_); }

uint32_t RowIndex::Find(uint32_t row) const {
  if (direct_) return row < slots_.size() ? slots_[row] : kNoRow;
  const size_t mask = buckets_.size() - 1;
  for (size_t b = BucketOf(row);; b = (b + 1) & mask) {
    const Bucket& bucket = buckets_[b];
    if (bucket.slot == kNoRow) return kNoRow;  // at most half full: an empty bucket always ends the probe
    if (bucket.row == row) return bucket.slot;
  }
}

void RowIndex::Insert(uint32_t row, uint32_t slot) {
  ACTORREC_ASSERT(slot != kNoRow, "the arena slot kNoRow is reserved");
  ++size_;
  if (direct_) {
    ACTORREC_ASSERT(row < slots_.size() && slots_[row] == kNoRow, "direct insert of an existing or foreign row");
    slots_[row] = slot;
    return;
  }
  if (2 * size_ > buckets_.size()) Grow();
  const size_t mask = buckets_.size() - 1;
  size_t b = BucketOf(row);
  while (buckets_[b].slot != kNoRow) {
    ACTORREC_ASSERT(buckets_[b].row != row, "hashed insert of an existing row");
    b = (b + 1) & mask;
  }
  buckets_[b] = Bucket{row, slot};
}

void RowIndex::Grow() {
  std::vector<Bucket> old(buckets_.size() * 2, Bucket{0, kNoRow});
  old.swap(buckets_);
  --shift_;
  const size_t mask = buckets_.size() - 1;
  for (const Bucket& bucket : old) {
    if (bucket.slot == kNoRow) continue;
    size_t b = BucketOf(bucket.row);
    while (buckets_[b].slot != kNoRow) b = (b + 1) & mask;
    buckets_[b] = bucket;
  }
}

size_t RowIndex::memory_bytes() const {
  return slots_.capacity() * sizeof(uint32_t) + buckets_.capacity() * sizeof(Bucket);
}

std::vector<std::pair<uint32_t, uint32_t>> RowIndex::SortedEntries() const {
  std::vector<std::pair<uint32_t, uint32_t>> entries;
  entries.reserve(size_);
  if (direct_) {
    for (uint32_t r = 0; r < slots_.size(); ++r) {
      if (slots_[r] != kNoRow) entries.emplace_back(r, slots_[r]);
    }
    return entries;
  }
  for (const Bucket& bucket : buckets_) {
    if (bucket.slot != kNoRow) entries.emplace_back(bucket.row, bucket.slot);
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace actorrec::embedding
