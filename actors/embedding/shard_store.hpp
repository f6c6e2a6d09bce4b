// ShardStore: the embedding shard's functional core. It holds the rows of
// one hash partition of every table, each row `width` weights followed by
// its `state_floats` optimizer floats, created lazily the first time it is
// touched (from a deterministic initializer of (t, r)), so a 33 M-row table
// costs memory only for the rows training touches.
//
// (1) Ownership: (t, r) belongs to shard ShardOf(t, r, shards). Every call
//     checks all its rows (range and ownership) before changing anything,
//     so a refused call leaves the store as it was.
// (2) Storage: per table a RowIndex (row_index.hpp: a direct array for
//     tables of at most 65536 rows, else open addressing) into one RowArena
//     (row_arena.hpp: chunked, never moves a row). No per-row allocation.
// (3) Determinism: a row's initial value depends only on (t, r) through the
//     caller's RowInit, never on when it was first touched; Digest and
//     ForEachRow visit rows in (t, r) order, whatever the order of creation.
// (4) The consistency protocol (a fetch served only after the write-backs it
//     depends on, ARCHITECTURE §3) is the shard actor's job; the store just
//     reads and writes rows. The row optimizer (models/) comes in as a
//     callback to Update, so this core does not depend on it.
// Not thread-safe: the actor owns it.
//
// Checkpoint file, format version 1 (shard_checkpoint.cpp). Integers are
// unsigned little-endian unless noted, floats IEEE-754 binary32
// little-endian, checksums XXH3-64 (base/digest.hpp) as in the dataset
// format (data/format/layout.hpp): a section's checksum covers its bytes
// before it, chunk c's with seed c so a chunk at the wrong place fails.
//
//   file := header | chunk 0 | ... | chunk C-1 | trailer
//
// Header, H = 64 + 8*T bytes:
//   0     8  magic 89 'A' 'R' 'S' 0D 0A 1A 0A (as the dataset file's, with
//            'S' for shard: a dataset given as a checkpoint is named so)
//   8     4  format version (1)
//   12    4  shard
//   16    4  shards (> shard)
//   20    4  width
//   24    4  state_floats (F = width + state_floats, 0 < F <= 2^20)
//   28    4  T: tables
//   32    8  batch: the global batch the checkpoint follows (signed)
//   40    8  R: rows in the file
//   48    4  K: rows per chunk (> 0)
//   52    4  reserved, 0
//   56   8T  rows of each table (its cardinality)
//   H-8   8  checksum of bytes [0, H-8), seed 0
// Chunk c, C = ceil(R / K) of them, holds rows [c*K, min((c+1)*K, R)) in
// strictly ascending (t, r) order across the file; each row is
//   4 t | 4 r | 4*F bytes: the F floats
// followed by 8 bytes: the checksum of the chunk's rows, seed c.
// Trailer, 24 bytes:
//   0     8  C: chunk count
//   8     8  R: row count (again)
//   16    8  whole-file checksum: XXH3-64 (seed 0) of the header's checksum,
//            every chunk's checksum in order and the trailer's bytes [0, 16),
//            as consecutive u64s. Each of those covers its section's bytes,
//            so this covers the whole file without a second pass over it.
// The header alone fixes the file's size, so truncation is found before
// any row is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/embedding/row_arena.hpp"
#include "actors/embedding/row_index.hpp"
#include "base/status.hpp"

namespace actorrec::embedding {

// The shard owning (t, r): a fixed mixing hash (SplitMix64-based, not
// std::hash), the same in every process and build.
uint32_t ShardOf(uint32_t table, uint64_t row, uint32_t shards);

struct RowFormat {
  uint32_t width = 0;         // weights
  uint32_t state_floats = 0;  // optimizer state after them
  uint32_t floats() const { return width + state_floats; }
};

// Fills all floats() of a new row (t, r). Must depend only on (t, r).
using RowInit = std::function<void(uint32_t table, uint64_t row, float* row_out)>;

class ShardStore {
 public:
  // The checkpoint's rows per chunk: about 1 MiB of rows per checksum, so a
  // flipped bit is pinned to a small region and the reader's buffer is small.
  static constexpr size_t kCheckpointChunkBytes = size_t{1} << 20;

  // REQUIRES: shard < shards, 0 < format.floats() <= 2^20.
  ShardStore(uint32_t shard, uint32_t shards, std::vector<uint64_t> table_rows, RowFormat format, RowInit init);
  ShardStore(ShardStore&&) = default;
  ShardStore& operator=(ShardStore&&) = default;

  // Copies n rows into out (n × floats()), creating untouched ones with init.
  // InvalidArgument naming the first (t, r) out of range or not owned; then
  // nothing is changed.
  Status Fetch(const uint32_t* tables, const uint32_t* rows, size_t n, float* out);
  // Overwrites n whole rows (write-back), creating them if needed (without
  // calling init: the row is overwritten anyway).
  Status Store(const uint32_t* tables, const uint32_t* rows, size_t n, const float* in);
  // For the no_cache mode: calls update(row, i) for each of the n rows in the
  // given order, creating them first.
  Status Update(const uint32_t* tables, const uint32_t* rows, size_t n,
                const std::function<void(float* row, size_t i)>& update);
  // Copies row (t, r) into out without creating it: an untouched row reads
  // as its initial value (evaluation must not change what the shard holds).
  Status Peek(uint32_t table, uint32_t row, float* out) const;

  // What the shard actually holds, for the memory report: the arena's
  // chunks plus the indexes (the capacity, not just the used part).
  size_t resident_rows() const { return arena_.rows(); }
  size_t memory_bytes() const;

  uint32_t shard() const { return shard_; }
  uint32_t shards() const { return shards_; }
  const std::vector<uint64_t>& table_rows() const { return table_rows_; }
  const RowFormat& format() const { return format_; }

  // Rows in ascending (t, r) order.
  void ForEachRow(const std::function<void(uint32_t table, uint64_t row, const float* data)>& visit) const;
  // A digest of (t, r, bytes) of every row in (t, r) order: equal digests,
  // equal contents (bitwise, so -0.0 and 0.0 differ), in any process.
  uint64_t Digest() const;

  // Writes the checkpoint (format above) atomically (base/atomic_file.hpp),
  // with `batch` recorded; `rows_per_chunk` 0 picks kCheckpointChunkBytes.
  Status SaveCheckpoint(const std::string& path, int64_t batch, uint32_t rows_per_chunk = 0) const;
  // Reads a checkpoint back into a store using `init` for rows it does not
  // hold; *batch (if not null) gets the recorded batch. Corruption naming the
  // file and the chunk on any mismatch; InvalidArgument when the file is not
  // a shard checkpoint; NotSupported for a newer format version.
  static Result<ShardStore> LoadCheckpoint(const std::string& path, RowInit init, int64_t* batch);

 private:
  Status Check(uint32_t table, uint32_t row) const;
  Status CheckAll(const uint32_t* tables, const uint32_t* rows, size_t n) const;
  // The row (t, r), appended uninitialized when absent (*created says so).
  float* Row(uint32_t table, uint32_t row, bool* created);
  float* InitializedRow(uint32_t table, uint32_t row);

  uint32_t shard_, shards_;
  std::vector<uint64_t> table_rows_;
  RowFormat format_;
  RowInit init_;
  std::vector<RowIndex> index_;  // per table
  RowArena arena_;
};

}  // namespace actorrec::embedding
