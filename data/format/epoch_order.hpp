// EpochOrder: which samples make up each batch of an epoch, deterministic in
// (seed, epoch) on any machine and build; EpochCursor walks it across epochs.
//
// Design: the trade-off is read speed against shuffle quality. The file is
// columnar, so each sample read out of order costs a load from each of its
// columns (28 for Criteo) in a different place; the farther apart a batch's
// samples, the more of those miss the caches. A full permutation scatters a
// batch over the whole file and, as a table, would cost 8n bytes (35 GB for
// Criteo Terabyte). Instead, keyed bijections (permutation.hpp), evaluated
// pointwise in O(1) memory, shuffle at two levels:
//  (1) the chunks of the file;
//  (2) the samples within each window of `window_chunks` consecutive chunks
//      of that shuffled sequence.
// So a batch draws from one or two windows, and a sample meets, over the
// epochs, the samples of every other chunk. window_chunks = 0 makes the
// window the whole dataset: a full permutation. tools/bench/format_bench
// measures both against file order.
//
// Batches are consecutive runs of batch_size positions; the last, partial
// batch is kept (num_batches = ceil(n / batch_size)), so every sample is seen
// once per epoch. shuffle = false gives file order.
#pragma once

#include <cstdint>
#include <vector>

#include "data/format/permutation.hpp"

namespace actorrec::data::format {

struct EpochOptions {
  uint64_t seed = 0;
  bool shuffle = true;
  uint64_t batch_size = 2048;
  // Chunks whose samples are shuffled together (see above). 64 chunks of
  // 2048 Criteo samples (the writer's default) are 131072 samples, 21 MB:
  // each batch mixes samples from 64 places in the file. In format_bench
  // (1 M Criteo samples, one thread) a shuffled sample cost about 65 ns with
  // 64 chunks of 2048, about as much as with 8 chunks of 16384 (the same
  // 131072 samples), and 100–130 ns with a full permutation; in file order,
  // 7 ns.
  uint32_t window_chunks = 64;
};

// x / d by a shift when d is a power of two (chunk sizes usually are): a
// 64-bit division per sample shows in a batch gather.
class Divider {
 public:
  explicit Divider(uint64_t d);
  uint64_t Div(uint64_t x) const { return shift_ >= 0 ? x >> shift_ : x / d_; }
  uint64_t d() const { return d_; }

 private:
  uint64_t d_;
  int shift_;
};

class EpochOrder {
 public:
  // The order of `epoch` over `num_samples` samples stored in chunks of
  // `samples_per_chunk` (Dataset::size() and Dataset::samples_per_chunk()).
  EpochOrder(const EpochOptions& options, uint64_t num_samples, uint32_t samples_per_chunk, uint64_t epoch);

  const EpochOptions& options() const { return options_; }
  uint64_t epoch() const { return epoch_; }
  uint64_t num_samples() const { return num_samples_; }
  uint32_t samples_per_chunk() const { return static_cast<uint32_t>(per_chunk_.d()); }
  uint64_t num_batches() const;

  // Positions [begin, end) of batch b in the epoch.
  uint64_t BatchBegin(uint64_t batch) const { return batch * options_.batch_size; }
  uint64_t BatchEnd(uint64_t batch) const;

  // The sample (its index in the file) at `position` of the epoch.
  uint64_t SampleAt(uint64_t position) const;

  // Replaces *samples with the samples of batch b, in batch order.
  void BatchSamples(uint64_t batch, std::vector<uint64_t>* samples) const;

 private:
  // A window: a range of the shuffled chunk sequence and of epoch positions.
  struct Window {
    uint64_t first_chunk = 0;  // [first_chunk, last_chunk) of the sequence
    uint64_t last_chunk = 0;
    uint64_t begin = 0;  // [begin, end) of epoch positions
    uint64_t end = 0;
    FeistelPermutation samples{0, 0};
  };
  Window WindowOf(uint64_t chunk_position) const;
  uint64_t ChunkPositionOf(uint64_t position) const;
  // The sample at `offset` of the window's samples in sequence order.
  uint64_t SampleOfOffset(const Window& window, uint64_t offset) const;
  // Samples at window offsets [from, to), shuffled, to out[0, to - from).
  void MapWindow(const Window& window, uint64_t from, uint64_t to, uint64_t* out) const;

  EpochOptions options_;
  uint64_t num_samples_;
  Divider per_chunk_;
  uint64_t epoch_;
  uint64_t epoch_key_;
  uint64_t window_chunks_;
  uint64_t partial_position_;       // sequence position of a partial last chunk; chunks if none
  std::vector<uint64_t> chunk_at_;  // shuffled sequence position -> chunk
  std::vector<uint64_t> start_;     // sequence position -> epoch position of its first sample; one extra
};

// Where a walk over epochs is: what a checkpoint saves.
struct EpochPosition {
  uint64_t epoch = 0;
  uint64_t batch = 0;
  bool operator==(const EpochPosition&) const = default;
};

// Walks batches across epochs. A cursor built at a saved position yields the
// same batches as the one that walked there: the order is a pure function of
// (seed, epoch, batch).
class EpochCursor {
 public:
  // `start.batch` is below the epoch's batch count (or 0 for an empty dataset).
  EpochCursor(const EpochOptions& options, uint64_t num_samples, uint32_t samples_per_chunk, EpochPosition start = {});

  EpochPosition position() const { return position_; }
  // The order of position().epoch; read batch position().batch from it.
  const EpochOrder& order() const { return order_; }
  // To the next batch; after an epoch's last, to batch 0 of the next epoch.
  void Advance();

 private:
  EpochPosition position_;
  EpochOrder order_;
};

}  // namespace actorrec::data::format
