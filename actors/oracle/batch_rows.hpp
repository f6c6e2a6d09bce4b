// BatchRows: the oracle's input for one global batch. Per trainer slice and
// per table, the distinct rows the slice touches, plus the inverse index and
// bag offsets that turn them back into the slice's features.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/oracle/kernel.hpp"
#include "base/status.hpp"
#include "data/batches/batch.hpp"
#include "data/sample_block.hpp"
#include "plan/trainer_plan.hpp"

namespace actorrec::oracle {

// One table of one trainer's slice: sample i's bag is
// rows[inverse[p]] for p in [offsets[i], offsets[i + 1]).
struct SliceTable {
  std::vector<data::RowId> rows;  // distinct, in order of first use
  std::vector<uint32_t> inverse;  // one per value position, each < rows.size()
  data::BagOffsets offsets;       // samples + 1 entries, starting at 0; compact when single-hot
  bool operator==(const SliceTable&) const = default;
};

struct BatchRows {
  uint32_t trainers = 0;
  uint32_t tables = 0;
  std::vector<SliceTable> slices;  // trainer-major: slices[w * tables + t]
  // With dedup groups (BatchRowsBuilder::SetDedupGroups): per trainer, per
  // group, which of the slice's bag tuples each sample uses; the slices of
  // a group's tables hold those tuples' bags, one per tuple.
  uint32_t group_count = 0;
  std::vector<BagGroup> groups;    // trainer-major: groups[w * group_count + g]

  SliceTable& slice(uint32_t w, uint32_t t) { return slices[size_t{w} * tables + t]; }
  const SliceTable& slice(uint32_t w, uint32_t t) const { return slices[size_t{w} * tables + t]; }
};

// Moves trainer w's dedup groups out of a spent BatchRows into a plan's
// (swapped: the BatchRows gets the plan's old capacity back).
void TakeGroups(BatchRows* rows, uint32_t w, std::vector<BagGroup>* out);

struct SampleRange {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Trainer w's contiguous slice of a global batch of `samples` samples:
// [w·samples/W, (w+1)·samples/W). Slices differ in size by at most one; the
// oracle shell cuts the batch it sends each trainer with this same function.
SampleRange SliceOf(uint32_t samples, uint32_t trainers, uint32_t w);

// The largest of rows[0, n), 0 when n is 0: range checks compare it alone
// against a table's cardinality (a loop the compiler vectorizes), and look
// for the row's place only when it is out of range.
data::RowId LargestRow(const data::RowId* rows, size_t n);

// Builds BatchRows from a global batch's KJT. Keeps its scratch between
// calls, so that building allocates only the output's vectors.
class BatchRowsBuilder {
 public:
  // table_rows[t]: the cardinality of table t; rows must be below it.
  explicit BatchRowsBuilder(std::vector<uint64_t> table_rows, Kernel kernel = Kernel::kBest);

  // Splits `batch` into `trainers` slices (SliceOf) and deduplicates each
  // slice's bags per table. InvalidArgument when the batch does not have
  // one KJT table per cardinality or holds a row id out of range.
  //
  // With dedup groups, a group's tables are planned as the slice's distinct
  // bag tuples (numbered in order of first use in the slice) and
  // out->groups says which tuple each sample uses. `ikjt`, if given, is the
  // batch's IKJT as the sampler sent it (data::Deduplicate of the batch,
  // holding a group for each dedup group): its tuples are renumbered per
  // slice instead of deduplicating the bags again; the result is the same.
  // InvalidArgument, naming dataset.dedup_groups, when a group mixes
  // single-hot and multi-hot tables.
  Status Build(const data::SampleBlock& batch, uint32_t trainers, BatchRows* out, const data::Ikjt* ikjt = nullptr);

  // Tables deduplicated together (config dataset.dedup_groups, each
  // ascending, no table twice); empty: none.
  void SetDedupGroups(std::vector<std::vector<uint32_t>> groups);
  const std::vector<std::vector<uint32_t>>& dedup_groups() const { return groups_; }

  // Tables up to this many rows dedup through a direct array: 4 bytes a row,
  // 256 KiB at most, which stays in L2 across the slices of a batch; larger
  // ones through a hash set.
  static constexpr uint64_t kDirectRows = uint64_t{1} << 16;
  // Tables up to this many rows keep their tags in two registers in the
  // AVX-512 kernel: seven of Criteo's 26 tables, a quarter of its ids.
  static constexpr uint64_t kTinyRows = 32;

  // Whether slices go through the AVX-512 kernels.
  bool vectorized() const { return vectorized_; }

  // Tests: the tags of the next Build start at `base`, so that a test can
  // reach the point where they start again from zero. Only raising it is
  // safe: earlier tags must stay at most the base.
  void StartTagsAt(uint32_t base) {
    ACTORREC_ASSERT(base >= base_, "tags may only start higher");
    base_ = base;
  }

 private:
  // Dedups one slice of table t into `out`. Small tables use a direct-
  // indexed array (it fits in cache); large ones an open-addressing set,
  // which lives in cache where an array over millions of rows would miss.
  void Dedup(uint32_t t, const data::RowId* values, size_t count, SliceTable* out);
  // Both write the distinct rows to distinct_rows_ and return their number.
  size_t DedupDirect(uint32_t t, const data::RowId* values, size_t count, SliceTable* out);
  size_t DedupHashed(const data::RowId* values, size_t count, SliceTable* out);
  // Requests part `part` of `parts` of the scratch (tags or hash cells)
  // that the dedup of a slice of `count` ids of table t will read.
  void PrefetchScratch(uint32_t t, size_t count, uint32_t part, uint32_t parts) const;
  // Cells of the hash set for a slice of `count` ids.
  static size_t HashCells(size_t count);

  // Tables up to this many rows dedup with a branch on "new row?", which
  // is nearly always "no" there.
  static constexpr uint64_t kFewRows = 1024;

  std::vector<uint64_t> table_rows_;
  bool vectorized_;
  // Both kinds of scratch hold tags: a row seen by the current Dedup call
  // as its index-th distinct row has tag base_ + 1 + index, and tags of
  // earlier calls are at most base_, which grows by each call's count; so
  // nothing is cleared between calls (only when base_ would wrap).
  std::vector<std::vector<uint32_t>> direct_;  // per small table, per row: its tag
  std::vector<uint64_t> hash_cells_;           // per cell of the set: its row's tag << 32 | its row
  std::vector<data::RowId> distinct_rows_;
  uint32_t base_ = 0;

  // Dedup groups: the groups, whether each table is in one, and scratch.
  Status BuildGroups(const data::SampleBlock& batch, uint32_t trainers, BatchRows* out, const data::Ikjt* ikjt);
  std::vector<std::vector<uint32_t>> groups_;
  std::vector<bool> grouped_;
  std::vector<uint32_t> local_of_;  // a batch tuple -> its number in the slice, or UINT32_MAX
  std::vector<uint32_t> tuples_;    // the slice's tuples, in order of first use
  data::SampleBlock::Table tuple_bags_;
};

}  // namespace actorrec::oracle
