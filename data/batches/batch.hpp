// Batches as the system passes them around: a global batch (or a trainer's
// slice of one) with its position in the epoch, its samples in KJT form and,
// optionally, the IKJT of its sparse features (RecD's in-batch dedup).
//
// KJT (keyed jagged tensor): per table, values + offsets, i.e. exactly a
// SampleBlock::Table. IKJT (inverse KJT): per group of tables whose features
// change together, the unique bag tuples and, per sample, which tuple it
// uses. Expanding an IKJT is a jagged index-select and gives back the KJT.
#pragma once

#include <cstdint>
#include <vector>

#include "data/sample_block.hpp"

namespace actorrec::data {

// `trainer` of a batch that is a whole global batch, not a trainer's slice.
inline constexpr uint32_t kWholeBatch = 0xffffffffu;

struct Batch {
  uint32_t epoch = 0;
  uint64_t index = 0;         // global batch number b in the epoch's order
  uint64_t first_sample = 0;  // epoch position of samples[0]: b × B + slice_begin
  uint32_t trainer = kWholeBatch;
  uint32_t slice_begin = 0;   // within the global batch
  uint32_t slice_end = 0;     // one past the last; samples.size() == slice_end − slice_begin
  SampleBlock samples;        // labels, dense, and the KJT (samples.tables)
  bool operator==(const Batch&) const = default;
};

// One IKJT group: the tables of `tables` deduplicated together. Tuple u holds
// bag unique[k] u of every table tables[k]; sample i uses tuple inverse[i].
struct IkjtGroup {
  std::vector<uint32_t> tables;             // ascending table indices
  std::vector<SampleBlock::Table> unique;   // one per entry of tables, each with U bags
  std::vector<uint32_t> inverse;            // one per sample, in [0, U)
  size_t unique_count() const { return unique.empty() ? 0 : unique[0].offsets.size() - 1; }
  bool operator==(const IkjtGroup&) const = default;
};

struct Ikjt {
  std::vector<IkjtGroup> groups;  // every table in exactly one group
  bool operator==(const Ikjt&) const = default;
};

// Every table in a group of its own: per-feature dedup.
std::vector<std::vector<uint32_t>> SingletonGroups(size_t num_tables);

// Deduplicates the KJT `tables` (all with the same number of samples) into
// one IkjtGroup per entry of `groups`. Two samples share a tuple only when all
// of the group's bags are equal; tuples are numbered in order of first use,
// so the result depends on nothing but the input.
// REQUIRES: every table index appears in at most one group (in exactly one
// for an Ikjt that Expand or the batch codec takes).
Ikjt Deduplicate(const std::vector<SampleBlock::Table>& tables, const std::vector<std::vector<uint32_t>>& groups);

// The jagged index-select: bags indices[0], indices[1], ... of `bags`,
// concatenated into `out` (values and offsets).
// REQUIRES: every index < number of bags.
void JaggedIndexSelect(const SampleBlock::Table& bags, const std::vector<uint32_t>& indices, SampleBlock::Table* out);

// Expands `ikjt` back to one KJT table per table index (num_tables entries).
// REQUIRES: every table index in exactly one group.
std::vector<SampleBlock::Table> Expand(const Ikjt& ikjt, size_t num_tables);

// `groups`, then every table none of them lists in a group of its own: the
// grouping that covers all `num_tables` tables (what the batch codec needs).
std::vector<std::vector<uint32_t>> CompleteGroups(const std::vector<std::vector<uint32_t>>& groups, size_t num_tables);

// Total ids in the KJT divided by total ids in the IKJT: how much the dedup
// saves in ids moved and looked up (RecD's DedupeFactor over the batch).
double DedupFactor(const std::vector<SampleBlock::Table>& kjt, const Ikjt& ikjt);

}  // namespace actorrec::data
