// RowArena: storage for a shard's rows, `floats` floats each, addressed by a
// dense slot number 0, 1, 2, ... in order of creation.
//
// (1) Rows live in chunks that are never reallocated, so a row's address is
//     stable and growing never copies the arena (a shard may hold GBs).
// (2) Chunk sizes double from kFirstChunkRows up to kMaxChunkRows and then
//     stay there: a shard that touched 1000 rows holds at most about twice
//     that, while a big shard pays one allocation per kMaxChunkRows rows.
//     Chunk k >= 1 starts at slot kFirstChunkRows << (k-1) until the cap, so
//     locating a slot is a bit_width, not a search.
// Not thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace actorrec::embedding {

class RowArena {
 public:
  static constexpr uint32_t kFirstChunkRows = 64;
  // 4096 rows of 64 weights and 64 state floats are 2 MiB: large enough that
  // allocation is rare, small enough that the last chunk's slack is noise.
  static constexpr uint32_t kMaxChunkRows = 4096;

  explicit RowArena(uint32_t floats) : floats_(floats) {}

  // Appends a row (uninitialized contents) and returns its slot.
  uint32_t Append();
  float* At(uint32_t slot) { return Locate(slot); }
  const float* At(uint32_t slot) const { return Locate(slot); }

  uint32_t rows() const { return rows_; }
  size_t memory_bytes() const { return allocated_rows_ * size_t{floats_} * sizeof(float); }

 private:
  static_assert(std::has_single_bit(kFirstChunkRows) && std::has_single_bit(kMaxChunkRows) &&
                kFirstChunkRows <= kMaxChunkRows);
  static constexpr int kFirstBits = std::bit_width(kFirstChunkRows) - 1;  // log2
  static constexpr int kMaxBits = std::bit_width(kMaxChunkRows) - 1;

  // The chunk holding `slot` and the slot's row within it.
  static void ChunkOf(uint32_t slot, size_t* chunk, uint32_t* offset) {
    if (slot >= kMaxChunkRows) {
      *chunk = static_cast<size_t>(kMaxBits - kFirstBits) + slot / kMaxChunkRows;
      *offset = slot % kMaxChunkRows;
    } else if (slot < kFirstChunkRows) {
      *chunk = 0;
      *offset = slot;
    } else {
      const int bits = std::bit_width(slot) - 1;  // slot in [2^bits, 2^(bits+1))
      *chunk = static_cast<size_t>(bits - kFirstBits + 1);
      *offset = slot - (uint32_t{1} << bits);
    }
  }
  float* Locate(uint32_t slot) const {
    size_t chunk;
    uint32_t offset;
    ChunkOf(slot, &chunk, &offset);
    return chunks_[chunk].get() + size_t{offset} * floats_;
  }

  uint32_t floats_;
  uint32_t rows_ = 0;
  size_t allocated_rows_ = 0;
  std::vector<std::unique_ptr<float[]>> chunks_;
};

inline uint32_t RowArena::Append() {
  if (rows_ == allocated_rows_) {
    // The next chunk holds as many rows as all before it (doubling), within
    // [kFirstChunkRows, kMaxChunkRows].
    size_t size = allocated_rows_ == 0 ? kFirstChunkRows : allocated_rows_;
    if (size > kMaxChunkRows) size = kMaxChunkRows;
    chunks_.push_back(std::make_unique_for_overwrite<float[]>(size * floats_));
    allocated_rows_ += size;
  }
  return rows_++;
}

}  // namespace actorrec::embedding
