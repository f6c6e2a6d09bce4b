// Slicing a global batch among trainers and deduplicating each slice.
#include "actors/oracle/batch_rows.hpp"

#include <algorithm>
#include <string>

#include "base/vector_clones.hpp"

namespace actorrec::oracle {
namespace {

// Build's checks and copies, apart so that they are cloned for the CPU's
// vector width (SSE2 has no unsigned 32-bit max: the baseline emulates it).

ACTORREC_VECTOR_CLONES
bool Decreasing(const uint32_t* offsets, size_t n) {
  bool decreasing = false;
  for (size_t i = 1; i < n; ++i) decreasing |= offsets[i] < offsets[i - 1];
  return decreasing;
}

ACTORREC_VECTOR_CLONES
data::RowId Largest(const data::RowId* values, size_t n) {
  data::RowId largest = 0;
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, values[i]);
  return largest;
}

// to[i] = from[i] − base.
ACTORREC_VECTOR_CLONES
void Rebase(const uint32_t* from, size_t n, uint32_t base, uint32_t* to) {
  for (size_t i = 0; i < n; ++i) to[i] = from[i] - base;
}

}  // namespace

SampleRange SliceOf(uint32_t samples, uint32_t trainers, uint32_t w) {
  ACTORREC_ASSERT(w < trainers, "trainer index out of range");
  return {static_cast<uint32_t>(uint64_t{samples} * w / trainers),
          static_cast<uint32_t>(uint64_t{samples} * (w + 1) / trainers)};
}

BatchRowsBuilder::BatchRowsBuilder(std::vector<uint64_t> table_rows)
    : table_rows_(std::move(table_rows)), direct_(table_rows_.size()) {}

Status BatchRowsBuilder::Build(const data::SampleBlock& batch, uint32_t trainers, BatchRows* out) {
  const uint32_t tables = static_cast<uint32_t>(table_rows_.size());
  if (batch.tables.size() != tables) {
    return Status::InvalidArgument("batch has " + std::to_string(batch.tables.size()) + " sparse tables, the oracle " +
                                   std::to_string(tables));
  }
  if (trainers == 0) return Status::InvalidArgument("a batch needs at least one trainer");
  const uint32_t samples = static_cast<uint32_t>(batch.size());
  for (uint32_t t = 0; t < tables; ++t) {
    const auto& kjt = batch.tables[t];
    if (kjt.offsets.size() != size_t{samples} + 1 || kjt.offsets[0] != 0 || kjt.offsets.back() != kjt.values.size()) {
      return Status::InvalidArgument("table " + std::to_string(t) + " has " + std::to_string(kjt.offsets.size()) +
                                     " offsets for " + std::to_string(samples) +
                                     " samples, or they do not run from 0 to its value count");
    }
    if (Decreasing(kjt.offsets.data(), kjt.offsets.size())) return Status::InvalidArgument("table " + std::to_string(t) + ": offsets decrease");
    // The largest id first (a loop the compiler vectorizes), its place only
    // when it is out of range.
    const data::RowId largest = Largest(kjt.values.data(), kjt.values.size());
    if (!kjt.values.empty() && largest >= table_rows_[t]) {
      const size_t i = std::find(kjt.values.begin(), kjt.values.end(), largest) - kjt.values.begin();
      return Status::InvalidArgument("table " + std::to_string(t) + " value " + std::to_string(i) + ": row " +
                                     std::to_string(largest) + " is not below the table's " +
                                     std::to_string(table_rows_[t]) + " rows");
    }
  }
  out->trainers = trainers;
  out->tables = tables;
  out->slices.resize(size_t{trainers} * tables);
  // Table-major: a table's dedup scratch stays in cache across its slices.
  for (uint32_t t = 0; t < tables; ++t) {
    for (uint32_t w = 0; w < trainers; ++w) {
      const SampleRange range = SliceOf(samples, trainers, w);
      const auto& kjt = batch.tables[t];
      SliceTable& slice = out->slice(w, t);
      const uint32_t base = kjt.offsets[range.begin];
      const size_t bags = size_t{range.end} - range.begin + 1;
      slice.offsets.resize(bags);
      Rebase(kjt.offsets.data() + range.begin, bags, base, slice.offsets.data());
      Dedup(t, kjt.values.data() + base, kjt.offsets[range.end] - base, &slice);
    }
  }
  return Status::Ok();
}

void BatchRowsBuilder::Dedup(uint32_t t, const data::RowId* values, size_t count, SliceTable* out) {
  // Distinct rows go to scratch sized for the worst case (all distinct),
  // then are copied out: resizing out->rows up and down would zero-fill it.
  if (distinct_rows_.size() < count) distinct_rows_.resize(count);
  out->inverse.resize(count);
  if (++stamp_ == 0) {  // wrapped: old entries could read as current
    for (auto& d : direct_) std::fill(d.begin(), d.end(), 0);
    std::fill(cells_.begin(), cells_.end(), Cell{0, 0});
    stamp_ = 1;
  }
  const size_t distinct =
      table_rows_[t] > kDirectRows ? DedupHashed(values, count, out) : DedupDirect(t, values, count, out);
  out->rows.assign(distinct_rows_.data(), distinct_rows_.data() + distinct);
}

size_t BatchRowsBuilder::DedupDirect(uint32_t t, const data::RowId* values, size_t count, SliceTable* out) {
  std::vector<uint64_t>& direct = direct_[t];
  if (direct.empty()) direct.assign(table_rows_[t], 0);
  uint64_t* seen = direct.data();
  data::RowId* rows = distinct_rows_.data();
  uint32_t* inverse = out->inverse.data();
  const uint32_t stamp = stamp_;  // a local: stores to `seen` could alias the member
  const uint64_t tag = uint64_t{stamp} << 32;
  uint32_t distinct = 0;
  if (table_rows_[t] <= kFewRows) {
    // Few rows: after the first few ids of a slice nearly every id is a
    // repeat, which the predictor learns; and the branch-free loop below
    // would wait, id after id, for the store of the same row's entry.
    for (size_t p = 0; p < count; ++p) {
      const data::RowId row = values[p];
      uint64_t s = seen[row];
      if (static_cast<uint32_t>(s >> 32) != stamp) {
        s = tag | distinct;
        seen[row] = s;
        rows[distinct++] = row;
      }
      inverse[p] = static_cast<uint32_t>(s);
    }
    return distinct;
  }
  // Branch-free (masks, not ?:, which GCC turns back into a branch):
  // whether a row is new is a coin toss for the predictor.
  for (size_t p = 0; p < count; ++p) {
    const data::RowId row = values[p];
    const uint64_t s = seen[row];
    const uint32_t fresh = static_cast<uint32_t>(s >> 32) != stamp;
    const uint32_t mask = 0u - fresh;
    const uint32_t index = (distinct & mask) | (static_cast<uint32_t>(s) & ~mask);
    seen[row] = tag | index;
    rows[distinct] = row;
    distinct += fresh;
    inverse[p] = index;
  }
  return distinct;
}

size_t BatchRowsBuilder::DedupHashed(const data::RowId* values, size_t count, SliceTable* out) {
  // At most a quarter full: most rows then find their cell at the first
  // probe, and the probe loop's branch is rarely mispredicted (half full
  // measured 8 % slower on Criteo-shaped batches).
  size_t size = 16;
  while (size < 4 * count) size *= 2;
  if (cells_.size() < size) cells_.assign(size, Cell{0, 0});
  Cell* cells = cells_.data();
  data::RowId* rows = distinct_rows_.data();
  uint32_t* inverse = out->inverse.data();
  const uint32_t stamp = stamp_;
  const uint64_t tag = uint64_t{stamp} << 32;
  const size_t wrap = size - 1;
  const int shift = 64 - __builtin_ctzll(size);
  uint32_t distinct = 0;
  for (size_t p = 0; p < count; ++p) {
    const data::RowId row = values[p];
    const uint64_t key = tag | row;
    // Fibonacci hashing: the top bits of the product spread consecutive ids.
    size_t h = static_cast<size_t>((uint64_t{row} * 0x9E3779B97F4A7C15ULL) >> shift);
    while (cells[h].key != key && static_cast<uint32_t>(cells[h].key >> 32) == stamp) h = (h + 1) & wrap;
    const uint32_t fresh = cells[h].key != key;
    const uint32_t mask = 0u - fresh;
    const uint32_t index = (distinct & mask) | (cells[h].index & ~mask);
    cells[h] = Cell{key, index};
    rows[distinct] = row;
    distinct += fresh;
    inverse[p] = index;
  }
  return distinct;
}

}  // namespace actorrec::oracle
