// Shuffled chunks, shuffled samples within windows of chunks, batches over them.
#include "data/format/epoch_order.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

#include "base/status.hpp"

namespace actorrec::data::format {
namespace {

// Streams of an epoch's key: one for the chunk order, then one per window.
constexpr uint64_t kChunkStream = 0;
constexpr uint64_t kFirstWindowStream = 1;

}  // namespace

Divider::Divider(uint64_t d) : d_(d), shift_(std::has_single_bit(d) ? std::countr_zero(d) : -1) {}

EpochOrder::EpochOrder(const EpochOptions& options, uint64_t num_samples, uint32_t samples_per_chunk, uint64_t epoch)
    : options_(options),
      num_samples_(num_samples),
      per_chunk_(samples_per_chunk),
      epoch_(epoch),
      epoch_key_(DeriveKey(options.seed, epoch)) {
  ACTORREC_ASSERT(options.batch_size > 0 && samples_per_chunk > 0, "batch and chunk sizes are positive");
  const uint64_t chunks = (num_samples + samples_per_chunk - 1) / samples_per_chunk;
  window_chunks_ = options.window_chunks == 0 ? std::max<uint64_t>(chunks, 1) : options.window_chunks;
  partial_position_ = chunks;
  if (!options.shuffle) return;
  const FeistelPermutation chunk_order(chunks, DeriveKey(epoch_key_, kChunkStream));
  chunk_at_.resize(chunks);
  start_.resize(chunks + 1);
  for (uint64_t q = 0; q < chunks; ++q) {
    chunk_at_[q] = chunk_order(q);
    const uint64_t size = std::min<uint64_t>(samples_per_chunk, num_samples - chunk_at_[q] * samples_per_chunk);
    if (size < samples_per_chunk) partial_position_ = q;
    start_[q + 1] = start_[q] + size;
  }
}

uint64_t EpochOrder::num_batches() const { return (num_samples_ + options_.batch_size - 1) / options_.batch_size; }

uint64_t EpochOrder::BatchEnd(uint64_t batch) const {
  return std::min(num_samples_, (batch + 1) * options_.batch_size);
}

uint64_t EpochOrder::ChunkPositionOf(uint64_t position) const {
  return static_cast<uint64_t>(std::upper_bound(start_.begin(), start_.end(), position) - start_.begin()) - 1;
}

EpochOrder::Window EpochOrder::WindowOf(uint64_t chunk_position) const {
  const uint64_t w = chunk_position / window_chunks_;
  Window window;
  window.first_chunk = w * window_chunks_;
  window.last_chunk = std::min<uint64_t>(chunk_at_.size(), window.first_chunk + window_chunks_);
  window.begin = start_[window.first_chunk];
  window.end = start_[window.last_chunk];
  window.samples = FeistelPermutation(window.end - window.begin, DeriveKey(epoch_key_, kFirstWindowStream + w));
  return window;
}

uint64_t EpochOrder::SampleOfOffset(const Window& window, uint64_t offset) const {
  // Every chunk holds samples_per_chunk samples but the file's last one,
  // which may sit anywhere in the sequence: step over it when it is here.
  uint64_t q;
  if (partial_position_ < window.first_chunk || partial_position_ >= window.last_chunk) {
    q = window.first_chunk + per_chunk_.Div(offset);
  } else {
    const uint64_t partial_begin = start_[partial_position_] - window.begin;
    const uint64_t partial_end = start_[partial_position_ + 1] - window.begin;
    if (offset < partial_begin) q = window.first_chunk + per_chunk_.Div(offset);
    else if (offset < partial_end) q = partial_position_;
    else q = partial_position_ + 1 + per_chunk_.Div(offset - partial_end);
  }
  return chunk_at_[q] * per_chunk_.d() + (window.begin + offset - start_[q]);
}

void EpochOrder::MapWindow(const Window& window, uint64_t from, uint64_t to, uint64_t* out) const {
  std::iota(out, out + (to - from), from);
  window.samples.Map(out, to - from);
  for (uint64_t j = 0; j < to - from; ++j) out[j] = SampleOfOffset(window, out[j]);
}

uint64_t EpochOrder::SampleAt(uint64_t position) const {
  ACTORREC_ASSERT(position < num_samples_, "position beyond the epoch");
  if (!options_.shuffle) return position;
  const Window window = WindowOf(ChunkPositionOf(position));
  uint64_t sample;
  MapWindow(window, position - window.begin, position - window.begin + 1, &sample);
  return sample;
}

void EpochOrder::BatchSamples(uint64_t batch, std::vector<uint64_t>* samples) const {
  ACTORREC_ASSERT(batch < num_batches(), "batch beyond the epoch");
  const uint64_t begin = BatchBegin(batch);
  const uint64_t end = BatchEnd(batch);
  samples->resize(end - begin);
  if (!options_.shuffle) {
    std::iota(samples->begin(), samples->end(), begin);
    return;
  }
  // A batch spans one window or a few: map each window's part at once.
  Window window = WindowOf(ChunkPositionOf(begin));
  for (uint64_t p = begin; p < end;) {
    if (p >= window.end) window = WindowOf(window.last_chunk);
    const uint64_t part_end = std::min(end, window.end);
    MapWindow(window, p - window.begin, part_end - window.begin, samples->data() + (p - begin));
    p = part_end;
  }
}

EpochCursor::EpochCursor(const EpochOptions& options, uint64_t num_samples, uint32_t samples_per_chunk,
                         EpochPosition start)
    : position_(start), order_(options, num_samples, samples_per_chunk, start.epoch) {
  ACTORREC_ASSERT(start.batch < order_.num_batches() || start.batch == 0, "start batch beyond its epoch");
}

void EpochCursor::Advance() {
  if (++position_.batch < order_.num_batches()) return;
  position_ = {position_.epoch + 1, 0};
  order_ = EpochOrder(order_.options(), order_.num_samples(), order_.samples_per_chunk(), position_.epoch);
}

}  // namespace actorrec::data::format
