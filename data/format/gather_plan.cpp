// Finding a batch's chunks and sorting its copies by place in the file.
#include "data/format/gather_plan.hpp"

#include <bit>

namespace actorrec::data::format {
namespace {

// Rows per sort bucket: 1024 rows are one 4 KiB page of an id column.
constexpr int kPageShift = 10;

}  // namespace

void PlanGather(std::span<const uint64_t> samples, uint32_t samples_per_chunk, GatherPlan* plan) {
  const size_t k = samples.size();
  // By shift when chunks are a power of two (the default): a 64-bit division
  // per sample is a visible share of a gather.
  const bool pow2 = std::has_single_bit(samples_per_chunk);
  const int shift = std::countr_zero(samples_per_chunk);

  // Distinct chunks through a small open-addressing table.
  plan->chunks.clear();
  size_t capacity = 16;
  while (capacity < 2 * k) capacity *= 2;
  std::vector<uint32_t> slot_at(capacity, UINT32_MAX);
  std::vector<uint32_t> slot(k);
  std::vector<uint32_t> row(k);
  for (size_t i = 0; i < k; ++i) {
    const uint64_t chunk = pow2 ? samples[i] >> shift : samples[i] / samples_per_chunk;
    row[i] = static_cast<uint32_t>(samples[i] - chunk * samples_per_chunk);
    size_t h = (chunk * 0x9e3779b97f4a7c15ull) >> 32 & (capacity - 1);
    while (slot_at[h] != UINT32_MAX && plan->chunks[slot_at[h]] != chunk) h = (h + 1) & (capacity - 1);
    if (slot_at[h] == UINT32_MAX) {
      slot_at[h] = static_cast<uint32_t>(plan->chunks.size());
      plan->chunks.push_back(chunk);
    }
    slot[i] = slot_at[h];
  }

  // Counting sort by (slot, page) when the buckets are few next to the batch;
  // otherwise (a full permutation of a large file) the samples are too far
  // apart for order to help, and they are copied in batch order.
  const uint64_t pages = (uint64_t{samples_per_chunk} + (1u << kPageShift) - 1) >> kPageShift;
  const uint64_t buckets = plan->chunks.size() * pages;
  plan->slot.resize(k);
  plan->row.resize(k);
  plan->dest.resize(k);
  if (buckets > 4 * k + 64) {
    for (size_t i = 0; i < k; ++i) {
      plan->slot[i] = slot[i];
      plan->row[i] = row[i];
      plan->dest[i] = static_cast<uint32_t>(i);
    }
    return;
  }
  std::vector<uint32_t> start(buckets + 1, 0);
  for (size_t i = 0; i < k; ++i) ++start[slot[i] * pages + (row[i] >> kPageShift) + 1];
  for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  for (size_t i = 0; i < k; ++i) {
    const uint32_t at = start[slot[i] * pages + (row[i] >> kPageShift)]++;
    plan->slot[at] = slot[i];
    plan->row[at] = row[i];
    plan->dest[at] = static_cast<uint32_t>(i);
  }
}

}  // namespace actorrec::data::format
