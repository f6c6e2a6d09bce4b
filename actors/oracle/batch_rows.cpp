// Slicing a global batch among trainers and deduplicating each slice.
#include "actors/oracle/batch_rows.hpp"

#include <algorithm>
#include <string>

#include "base/vector_clones.hpp"

#ifdef ACTORREC_HAVE_AVX512
#include <immintrin.h>
#endif

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

// to[i] = from[i] − base.
ACTORREC_VECTOR_CLONES
void Rebase(const uint32_t* from, size_t n, uint32_t base, uint32_t* to) {
  for (size_t i = 0; i < n; ++i) to[i] = from[i] - base;
}

// Dedups values[begin, count) through a direct array of tags (see
// BatchRowsBuilder), given the slice's first `distinct` rows in
// rows[0, distinct); returns the new number of distinct rows. For tables of
// few rows: after the first ids of a slice nearly every id is a repeat,
// which the predictor learns, where the branch-free DirectFrom would wait,
// id after id, for the store of the same row's tag.
size_t DirectFewFrom(uint32_t* tags, uint32_t base, const data::RowId* values, size_t begin, size_t count,
                     uint32_t distinct, data::RowId* rows, uint32_t* inverse) {
  for (size_t p = begin; p < count; ++p) {
    const data::RowId row = values[p];
    uint32_t tag = tags[row];
    if (tag <= base) {
      tag = base + 1 + distinct;
      tags[row] = tag;
      rows[distinct++] = row;
    }
    inverse[p] = tag - base - 1;
  }
  return distinct;
}

// DirectFewFrom for larger tables, where whether a row is new is a coin
// toss for the predictor: branch-free (masks, not ?:, which GCC turns back
// into a branch).
size_t DirectFrom(uint32_t* tags, uint32_t base, const data::RowId* values, size_t count, data::RowId* rows,
                  uint32_t* inverse) {
  uint32_t distinct = 0;
  for (size_t p = 0; p < count; ++p) {
    const data::RowId row = values[p];
    const uint32_t tag = tags[row];
    const uint32_t mask = 0u - static_cast<uint32_t>(tag <= base);
    const uint32_t index = (distinct & mask) | ((tag - base - 1) & ~mask);
    tags[row] = base + 1 + index;
    rows[distinct] = row;
    distinct -= mask;  // + 1 when new
    inverse[p] = index;
  }
  return distinct;
}

// The open-addressing set of one Dedup call: linear probing from a
// Fibonacci hash, whose top bits spread consecutive ids. A cell holds its
// row in the low word and the row's tag in the high one (one load, one
// cache line, per probe); it is live when its tag is above `base`
// (BatchRowsBuilder's tags).
struct HashSet {
  uint64_t* cells;
  uint32_t wrap;   // cells − 1, cells a power of two
  uint32_t shift;  // 32 − log2(cells)
  uint32_t base;
};

constexpr uint32_t kFibonacci32 = 0x9E3779B1u;

inline uint32_t CellTag(uint64_t cell) { return static_cast<uint32_t>(cell >> 32); }
inline uint32_t CellRow(uint64_t cell) { return static_cast<uint32_t>(cell); }

// Dedups values[begin, count) into a set that holds distinct rows so far
// (rows[0, distinct)); returns the new number of distinct rows.
size_t HashedFrom(const HashSet& set, const data::RowId* values, size_t begin, size_t count, uint32_t distinct,
                  data::RowId* rows, uint32_t* inverse) {
  uint64_t* cells = set.cells;
  const uint32_t base = set.base;
  for (size_t p = begin; p < count; ++p) {
    const data::RowId row = values[p];
    uint32_t h = (row * kFibonacci32) >> set.shift;
    uint64_t cell = cells[h];
    while (CellTag(cell) > base && CellRow(cell) != row) {
      h = (h + 1) & set.wrap;
      cell = cells[h];
    }
    // Branch-free (masks, not ?:, which GCC turns back into a branch):
    // whether a row is new is a coin toss for the predictor.
    const uint32_t tag = CellTag(cell);
    const uint32_t mask = 0u - static_cast<uint32_t>(tag <= base);
    const uint32_t index = (distinct & mask) | ((tag - base - 1) & ~mask);
    cells[h] = uint64_t{base + 1 + index} << 32 | row;
    rows[distinct] = row;
    distinct -= mask;  // + 1 when new
    inverse[p] = index;
  }
  return distinct;
}

#ifdef ACTORREC_HAVE_AVX512

// The AVX-512 kernels take 16 ids at a time. Within such a vector, a row
// may repeat: its first lane does the work, and the others copy its index.
struct Lanes {
  __m512i row;
  __m512i same;      // per lane, the earlier lanes with the same row
  __mmask16 first;   // the lanes with no such earlier lane
};

ACTORREC_AVX512 inline Lanes LoadLanes(const data::RowId* values) {
  Lanes l;
  l.row = _mm512_loadu_si512(values);
  l.same = _mm512_conflict_epi32(l.row);
  l.first = _mm512_testn_epi32_mask(l.same, l.same);
  return l;
}

// Given the index of each first lane (`fresh` ones new, numbered from
// `distinct` in lane order), gives the repeats their first lane's index (the
// lowest earlier lane with the same row: 31 − lzcnt of its isolated bit),
// appends the new rows and writes the 16 indices. Returns the new count.
ACTORREC_AVX512 inline uint32_t FinishLanes(const Lanes& l, __m512i index, __mmask16 fresh, uint32_t distinct,
                                                  data::RowId* rows, uint32_t* inverse) {
  const __m512i lowest = _mm512_and_si512(l.same, _mm512_sub_epi32(_mm512_setzero_si512(), l.same));
  const __m512i first_lane = _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_lzcnt_epi32(lowest));
  index = _mm512_mask_permutexvar_epi32(index, static_cast<__mmask16>(~l.first), first_lane, index);
  _mm512_mask_compressstoreu_epi32(rows + distinct, fresh, l.row);
  _mm512_storeu_si512(inverse, index);
  return distinct + static_cast<uint32_t>(__builtin_popcount(fresh));
}

// `fresh` lanes' indices: distinct, distinct + 1, … in lane order, into
// `index`.
ACTORREC_AVX512 inline __m512i NumberFresh(__m512i index, __mmask16 fresh, uint32_t distinct) {
  const __m512i lane_numbers = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_mask_expand_epi32(index, fresh, _mm512_add_epi32(lane_numbers, _mm512_set1_epi32(distinct)));
}

// Lanes 0–7 (half 0) or 8–15 (half 1) of v. (maskz: the unmasked
// extraction, and the cast, trip GCC 12's -Wmaybe-uninitialized.)
template <int kHalf>
ACTORREC_AVX512 inline __m256i Half(__m512i v) {
  return _mm512_maskz_extracti64x4_epi64(0xFF, v, kHalf);
}

// The 16 cells of `cell` that `lanes` name (8-lane gathers of 64-bit
// cells), split into their tags and rows; other lanes read as `empty`.
struct Cells {
  __m512i tag, row;
};
ACTORREC_AVX512 inline Cells GatherCells(const uint64_t* cells, __m512i cell, __mmask16 lanes, __m512i empty) {
  const long long* at = reinterpret_cast<const long long*>(cells);
  const __m512i low = _mm512_mask_i32gather_epi64(empty, static_cast<__mmask8>(lanes), Half<0>(cell),
                                                  at, 8);
  const __m512i high = _mm512_mask_i32gather_epi64(empty, static_cast<__mmask8>(lanes >> 8),
                                                   Half<1>(cell), at, 8);
  const __m512i odd_words = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i even_words = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return {_mm512_permutex2var_epi32(low, odd_words, high), _mm512_permutex2var_epi32(low, even_words, high)};
}

// HashedFrom for 16 ids at a time, then the scalar loop for the rest; the
// same cells, the same result. Per vector: lanes that repeat an earlier
// lane's row (conflict detection) take that lane's index at the end; the
// others probe together (a round: two 8-lane gathers of whole cells) until
// each finds its row or an empty cell. New rows are numbered in lane order, which keeps the
// distinct rows in order of first use, and then placed: lanes that found
// the same empty cell go in lane order, the later ones probing on.
// A scalar loop waits on each probe's load and on mispredicted "new row?"
// branches; this one has neither, which makes it about twice as fast on
// skewed ids (tools/bench/oracle_bench). Cells of 8 bytes, row and tag
// together, took it from 2.5–2.85 to 1.8–2.1 ns an id against separate
// arrays of rows and tags (two lines per probe, 16-lane gathers of each).
ACTORREC_AVX512 size_t HashedAvx512(const HashSet& set, const data::RowId* values, size_t count,
                                          data::RowId* rows, uint32_t* inverse) {
  const __m512i base = _mm512_set1_epi32(static_cast<int>(set.base));
  const __m512i base_plus_one = _mm512_set1_epi32(static_cast<int>(set.base + 1));
  const __m512i wrap = _mm512_set1_epi32(static_cast<int>(set.wrap));
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i fibonacci = _mm512_set1_epi32(static_cast<int>(kFibonacci32));
  const __m512i no_cell = _mm512_set1_epi32(-1);  // above every cell index
  const __m512i empty = _mm512_set1_epi64(static_cast<long long>(uint64_t{set.base} << 32));  // tag: not live
  // A new cell's words, row then tag, from lanes 0–7 and 8–15 of the two.
  const __m512i low_cells = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high_cells = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  long long* const cells = reinterpret_cast<long long*>(set.cells);
  const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(set.shift));
  uint32_t distinct = 0;
  size_t p = 0;
  for (; p + 16 <= count; p += 16) {
    const Lanes lanes = LoadLanes(values + p);
    const __m512i row = lanes.row;
    // maskz: the unmasked form trips GCC 12's -Wmaybe-uninitialized.
    __m512i cell = _mm512_maskz_srl_epi32(0xFFFF, _mm512_mullo_epi32(row, fibonacci), shift);
    __m512i index = _mm512_setzero_si512();
    __mmask16 fresh = 0;
    for (__mmask16 probing = lanes.first; probing != 0;) {
      const Cells found_cells = GatherCells(set.cells, cell, probing, empty);
      const __mmask16 live = _mm512_mask_cmpgt_epu32_mask(probing, found_cells.tag, base);
      const __mmask16 found = _mm512_mask_cmpeq_epi32_mask(live, found_cells.row, row);
      index = _mm512_mask_sub_epi32(index, found, found_cells.tag, base_plus_one);
      fresh |= probing & ~live;
      probing = live & ~found;
      cell = _mm512_mask_and_epi32(cell, probing, _mm512_add_epi32(cell, one), wrap);
    }
    index = NumberFresh(index, fresh, distinct);
    const __m512i new_tag = _mm512_add_epi32(index, base_plus_one);
    const __m512i low_new = _mm512_permutex2var_epi32(row, low_cells, new_tag);
    const __m512i high_new = _mm512_permutex2var_epi32(row, high_cells, new_tag);
    for (__mmask16 placing = fresh; placing != 0;) {
      // Lanes with no earlier placing lane on the same cell take it.
      const __m512i rivals = _mm512_conflict_epi32(_mm512_mask_mov_epi32(no_cell, placing, cell));
      const __mmask16 won = _mm512_mask_testn_epi32_mask(placing, rivals, _mm512_set1_epi32(placing));
      _mm512_mask_i32scatter_epi64(cells, static_cast<__mmask8>(won), Half<0>(cell), low_new, 8);
      _mm512_mask_i32scatter_epi64(cells, static_cast<__mmask8>(won >> 8), Half<1>(cell),
                                   high_new, 8);
      placing &= ~won;
      // The others look on for an empty cell.
      for (__mmask16 looking = placing; looking != 0;) {
        cell = _mm512_mask_and_epi32(cell, looking, _mm512_add_epi32(cell, one), wrap);
        looking = _mm512_mask_cmpgt_epu32_mask(looking, GatherCells(set.cells, cell, looking, empty).tag, base);
      }
    }
    distinct = FinishLanes(lanes, index, fresh, distinct, rows, inverse + p);
  }
  return HashedFrom(set, values, p, count, distinct, rows, inverse);
}

// One step of the direct-array dedup (tags[row], BatchRowsBuilder::
// DedupDirect): ids p … p + 15. A gather of their tags, conflict detection
// for rows that repeat within the 16, new rows numbered in lane order and
// their tags scattered back. Rows index the gather as signed 32-bit
// numbers, which direct tables (up to 2^16 rows) allow.
ACTORREC_AVX512 inline uint32_t DirectStep(uint32_t* tags, __m512i base, __m512i base_plus_one,
                                                 const data::RowId* values, size_t p, uint32_t distinct,
                                                 data::RowId* rows, uint32_t* inverse) {
  const Lanes lanes = LoadLanes(values + p);
  const __m512i tag =
      _mm512_mask_i32gather_epi32(base, lanes.first, lanes.row, reinterpret_cast<const int*>(tags), 4);
  const __mmask16 known = _mm512_mask_cmpgt_epu32_mask(lanes.first, tag, base);
  const __mmask16 fresh = lanes.first & ~known;
  const __m512i index = NumberFresh(_mm512_maskz_sub_epi32(known, tag, base_plus_one), fresh, distinct);
  _mm512_mask_i32scatter_epi32(tags, fresh, lanes.row, _mm512_add_epi32(index, base_plus_one), 4);
  return FinishLanes(lanes, index, fresh, distinct, rows, inverse + p);
}

// The direct-array dedup 16 ids at a time, then the scalar loop for the
// rest.
ACTORREC_AVX512 size_t DirectAvx512(uint32_t* tags, uint32_t base, const data::RowId* values, size_t count,
                                          data::RowId* rows, uint32_t* inverse) {
  const __m512i base_vector = _mm512_set1_epi32(static_cast<int>(base));
  const __m512i base_plus_one = _mm512_set1_epi32(static_cast<int>(base + 1));
  uint32_t distinct = 0;
  size_t p = 0;
  for (; p + 16 <= count; p += 16) {
    distinct = DirectStep(tags, base_vector, base_plus_one, values, p, distinct, rows, inverse);
  }
  return DirectFewFrom(tags, base, values, p, count, distinct, rows, inverse);
}

// DirectAvx512 for tables of at most kTinyRows rows, whose 32 tags fit two
// registers: while every id of a step is a row the slice has seen (after
// its first ids, nearly all of them), the step is a lookup in the
// registers, with no gather, no conflict detection and no scatter. A step
// with a new row goes through DirectStep, and the registers are reloaded.
ACTORREC_AVX512 size_t DirectTinyAvx512(uint32_t* tags, uint32_t base, const data::RowId* values,
                                              size_t count, data::RowId* rows, uint32_t* inverse) {
  const __m512i base_vector = _mm512_set1_epi32(static_cast<int>(base));
  const __m512i base_plus_one = _mm512_set1_epi32(static_cast<int>(base + 1));
  __m512i low = _mm512_loadu_si512(tags), high = _mm512_loadu_si512(tags + 16);
  uint32_t distinct = 0;
  size_t p = 0;
  for (; p + 16 <= count; p += 16) {
    const __m512i tag = _mm512_permutex2var_epi32(low, _mm512_loadu_si512(values + p), high);
    if (_mm512_cmpgt_epu32_mask(tag, base_vector) == 0xFFFF) {
      _mm512_storeu_si512(inverse + p, _mm512_sub_epi32(tag, base_plus_one));
      continue;
    }
    distinct = DirectStep(tags, base_vector, base_plus_one, values, p, distinct, rows, inverse);
    low = _mm512_loadu_si512(tags);
    high = _mm512_loadu_si512(tags + 16);
  }
  return DirectFewFrom(tags, base, values, p, count, distinct, rows, inverse);
}

#endif

}  // namespace

ACTORREC_VECTOR_CLONES
data::RowId LargestRow(const data::RowId* rows, size_t n) {
  data::RowId largest = 0;
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, rows[i]);
  return largest;
}

SampleRange SliceOf(uint32_t samples, uint32_t trainers, uint32_t w) {
  ACTORREC_ASSERT(w < trainers, "trainer index out of range");
  return {static_cast<uint32_t>(uint64_t{samples} * w / trainers),
          static_cast<uint32_t>(uint64_t{samples} * (w + 1) / trainers)};
}

BatchRowsBuilder::BatchRowsBuilder(std::vector<uint64_t> table_rows, Kernel kernel)
    : table_rows_(std::move(table_rows)),
      vectorized_(UseAvx512(kernel)),
      direct_(table_rows_.size()) {}

void TakeGroups(BatchRows* rows, uint32_t w, std::vector<BagGroup>* out) {
  out->resize(rows->group_count);
  for (uint32_t g = 0; g < rows->group_count; ++g) std::swap((*out)[g], rows->groups[size_t{w} * rows->group_count + g]);
}

void BatchRowsBuilder::SetDedupGroups(std::vector<std::vector<uint32_t>> groups) {
  groups_ = std::move(groups);
  grouped_.assign(table_rows_.size(), false);
  for (const auto& g : groups_) {
    for (uint32_t t : g) {
      ACTORREC_ASSERT(t < table_rows_.size() && !grouped_[t], "a dedup group's tables exist and are in no other group");
      grouped_[t] = true;
    }
  }
}

Status BatchRowsBuilder::Build(const data::SampleBlock& batch, uint32_t trainers, BatchRows* out,
                               const data::Ikjt* ikjt) {
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
    // Compact offsets are 0, 1, …, n by construction.
    if (!kjt.offsets.compact() && Decreasing(kjt.offsets.data(), kjt.offsets.size())) {
      return Status::InvalidArgument("table " + std::to_string(t) + ": offsets decrease");
    }
    const data::RowId largest = LargestRow(kjt.values.data(), kjt.values.size());
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
  // Between batches, push and plan evict it: the next table's is requested
  // a part per slice while this table's slices run, so that the kernels'
  // gathers find it in cache (oracle_bench, ids generated between batches:
  // dedup 0.73 -> 0.60 ms a batch). Consecutive hashed tables share the
  // set, already there.
  for (uint32_t t = 0; t < tables; ++t) {
    if (!groups_.empty() && grouped_[t]) continue;  // BuildGroups
    const bool prefetch_next = t + 1 < tables && (table_rows_[t] <= kDirectRows || table_rows_[t + 1] <= kDirectRows);
    for (uint32_t w = 0; w < trainers; ++w) {
      const SampleRange range = SliceOf(samples, trainers, w);
      if (prefetch_next) {
        const auto& next = batch.tables[t + 1].offsets;
        PrefetchScratch(t + 1, next[range.end] - next[range.begin], w, trainers);
      }
      const auto& kjt = batch.tables[t];
      SliceTable& slice = out->slice(w, t);
      const uint32_t base = kjt.offsets[range.begin];
      const size_t bags = size_t{range.end} - range.begin;
      if (kjt.offsets.compact()) {
        // Single-hot: the slice's offsets are 0, 1, …, bags too, and stay
        // unwritten (in a Criteo batch they are as many words as the ids).
        slice.offsets.SetSingleHot(bags);
      } else {
        slice.offsets.resize(bags + 1);
        Rebase(kjt.offsets.data() + range.begin, bags + 1, base, slice.offsets.data());
      }
      Dedup(t, kjt.values.data() + base, kjt.offsets[range.end] - base, &slice);
    }
  }
  out->group_count = static_cast<uint32_t>(groups_.size());
  out->groups.resize(size_t{trainers} * groups_.size());
  if (groups_.empty()) return Status::Ok();
  return BuildGroups(batch, trainers, out, ikjt);
}

Status BatchRowsBuilder::BuildGroups(const data::SampleBlock& batch, uint32_t trainers, BatchRows* out,
                                     const data::Ikjt* ikjt) {
  const uint32_t samples = static_cast<uint32_t>(batch.size());
  const uint32_t G = static_cast<uint32_t>(groups_.size());
  for (uint32_t g = 0; g < G; ++g) {
    const std::vector<uint32_t>& tables = groups_[g];
    // One bag shape per group: a tuple is a bag of every table, and a
    // group of single-hot tables stays single-hot (compact) in its plan.
    for (uint32_t t : tables) {
      if (batch.tables[t].offsets.compact() != batch.tables[tables[0]].offsets.compact()) {
        return Status::InvalidArgument(
            "dataset.dedup_groups[" + std::to_string(g) + "].tables: table " + std::to_string(tables[0]) + " is " +
            (batch.tables[tables[0]].offsets.compact() ? "single-hot" : "multi-hot") + " and table " +
            std::to_string(t) + " is " + (batch.tables[t].offsets.compact() ? "single-hot" : "multi-hot") +
            " in this batch; a group's tables must have one bag shape (put them in separate groups)");
      }
    }
    // The batch's tuples: the sampler's IKJT group of these tables, or a
    // dedup of the batch here (the lockstep driver reads batches itself).
    const data::IkjtGroup* group = nullptr;
    data::Ikjt own;
    if (ikjt) {
      for (const auto& candidate : ikjt->groups) {
        if (candidate.tables == tables) group = &candidate;
      }
    }
    if (group == nullptr) {
      own = data::Deduplicate(batch.tables, {tables});
      group = &own.groups[0];
    }
    if (group->inverse.size() != samples) {
      return Status::InvalidArgument("the IKJT of dataset.dedup_groups[" + std::to_string(g) + "] has " +
                                     std::to_string(group->inverse.size()) + " samples, the batch " +
                                     std::to_string(samples));
    }
    local_of_.assign(group->unique_count(), UINT32_MAX);
    for (uint32_t w = 0; w < trainers; ++w) {
      const SampleRange range = SliceOf(samples, trainers, w);
      BagGroup& bags = out->groups[size_t{w} * G + g];
      bags.tables = tables;
      bags.bag_of.resize(range.end - range.begin);
      tuples_.clear();
      for (uint32_t i = range.begin; i < range.end; ++i) {
        uint32_t& local = local_of_[group->inverse[i]];
        if (local == UINT32_MAX) {
          local = static_cast<uint32_t>(tuples_.size());
          tuples_.push_back(group->inverse[i]);
        }
        bags.bag_of[i - range.begin] = local;
      }
      for (uint32_t u : tuples_) local_of_[u] = UINT32_MAX;  // for the next slice
      for (size_t k = 0; k < tables.size(); ++k) {
        const uint32_t t = tables[k];
        data::JaggedIndexSelect(group->unique[k], tuples_, &tuple_bags_);
        SliceTable& slice = out->slice(w, t);
        if (batch.tables[t].offsets.compact()) {
          slice.offsets.SetSingleHot(tuples_.size());
        } else {
          slice.offsets.assign(tuple_bags_.offsets.begin(), tuple_bags_.offsets.end());
        }
        Dedup(t, tuple_bags_.values.data(), tuple_bags_.values.size(), &slice);
      }
    }
  }
  return Status::Ok();
}

void BatchRowsBuilder::Dedup(uint32_t t, const data::RowId* values, size_t count, SliceTable* out) {
  // Distinct rows go to scratch sized for the worst case (all distinct),
  // then are copied out: resizing out->rows up and down would zero-fill it.
  if (distinct_rows_.size() < count) distinct_rows_.resize(count);
  out->inverse.resize(count);
  if (uint64_t{base_} + count >= UINT32_MAX) {  // the tags would wrap: start again from 0
    for (auto& d : direct_) std::fill(d.begin(), d.end(), 0);
    std::fill(hash_cells_.begin(), hash_cells_.end(), 0);
    base_ = 0;
  }
  const size_t distinct =
      table_rows_[t] > kDirectRows ? DedupHashed(values, count, out) : DedupDirect(t, values, count, out);
  base_ += static_cast<uint32_t>(count);  // every tag of this call is at most base_ + count
  out->rows.assign(distinct_rows_.data(), distinct_rows_.data() + distinct);
}

size_t BatchRowsBuilder::DedupDirect(uint32_t t, const data::RowId* values, size_t count, SliceTable* out) {
  std::vector<uint32_t>& direct = direct_[t];
  // Tiny tables get kTinyRows tags (the AVX-512 kernel loads them all).
  if (direct.empty()) direct.assign(std::max(table_rows_[t], kTinyRows), 0);
  data::RowId* rows = distinct_rows_.data();
  uint32_t* inverse = out->inverse.data();
#ifdef ACTORREC_HAVE_AVX512
  if (vectorized_ && table_rows_[t] <= kTinyRows) return DirectTinyAvx512(direct.data(), base_, values, count, rows, inverse);
  if (vectorized_) return DirectAvx512(direct.data(), base_, values, count, rows, inverse);
#endif
  if (table_rows_[t] <= kFewRows) return DirectFewFrom(direct.data(), base_, values, 0, count, 0, rows, inverse);
  return DirectFrom(direct.data(), base_, values, count, rows, inverse);
}

void BatchRowsBuilder::PrefetchScratch(uint32_t t, size_t count, uint32_t part, uint32_t parts) const {
  const char* scratch;
  size_t bytes;
  if (table_rows_[t] <= kDirectRows) {
    scratch = reinterpret_cast<const char*>(direct_[t].data());  // empty before the table's first dedup
    bytes = direct_[t].size() * sizeof(uint32_t);
  } else {
    scratch = reinterpret_cast<const char*>(hash_cells_.data());
    bytes = std::min(hash_cells_.size(), HashCells(count)) * sizeof(uint64_t);
  }
  constexpr size_t kLine = 64;
  const size_t lines = (bytes + kLine - 1) / kLine;
  for (size_t line = lines * part / parts; line < lines * (part + 1) / parts; ++line) {
    __builtin_prefetch(scratch + line * kLine, 1);
  }
}

size_t BatchRowsBuilder::HashCells(size_t count) {
  // At most an eighth full: most rows then find their cell at the first
  // probe, so the probe loops rarely go round (a quarter full measured 15 %
  // slower on Criteo-shaped slices of 2048 ids, half full 40 %). Slices of
  // more than 4096 ids take a quarter: at an eighth, the set (8 bytes a
  // cell) would pass 256 KiB and crowd the L2 (one trainer's slice of
  // 16384 ids: 1.9–2.1 → 1.4 ms a batch).
  // (Cells are counted in 64 bits and capped at 2^32, which the 32-bit
  // hash addresses; count < 2^32, so a cell stays free.)
  const size_t cells_per_id = count > 4096 ? 4 : 8;
  const size_t most = size_t{1} << 32;
  size_t cells = 16;
  while (cells < cells_per_id * count && cells < most) cells *= 2;
  return cells;
}

size_t BatchRowsBuilder::DedupHashed(const data::RowId* values, size_t count, SliceTable* out) {
  const size_t cells = HashCells(count);
  if (hash_cells_.size() < cells) hash_cells_.assign(cells, 0);
  const HashSet set{hash_cells_.data(), static_cast<uint32_t>(cells - 1),
                    static_cast<uint32_t>(32 - __builtin_ctzll(cells)), base_};
#ifdef ACTORREC_HAVE_AVX512
  // Gathers take signed 32-bit indices: a set of more than 2^31 cells (a
  // slice of over 2^28 ids) stays with the scalar loop.
  if (vectorized_ && cells <= (size_t{1} << 31)) {
    return HashedAvx512(set, values, count, distinct_rows_.data(), out->inverse.data());
  }
#endif
  return HashedFrom(set, values, 0, count, 0, distinct_rows_.data(), out->inverse.data());
}

}  // namespace actorrec::oracle
