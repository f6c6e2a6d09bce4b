// The lookahead planning algorithm: coalescing on push, slots, sync sets and
// evictions on plan.
//
// One idea, in one file above the usual size on purpose: the plan's two
// passes (Classify, Emit) and the slot gather exist in a portable and an
// AVX-512 form that must make identical plans, and both forms read the
// record's private layout (the entry flags, TableEntries, PassCounts) that
// Push writes and PlanPartition hands them. A split would publish that
// layout in a second header; if the file grows, the passes (the anonymous
// namespace from the entry flags to EntriesOf) are the part to move out.
#include "actors/oracle/lookahead_core.hpp"

#include <algorithm>
#include <string>

#ifdef ACTORREC_HAVE_AVX512
#include <immintrin.h>
#endif

namespace actorrec::oracle {
namespace {

// Rows ahead whose state is prefetched. The loops over a batch's rows wait
// on cache misses of the per-row state; an iteration takes a few ns and a
// DRAM miss ~100 ns, so misses must be issued dozens of rows ahead. 64 is
// sized from those two numbers: on the shared 2-core machine it was written
// on, the benchmark could not tell 16 and 64 apart from its noise.
constexpr size_t kPrefetchDistance = 64;

// Links and handovers are appended to the records of up to L batches at
// once: L streams, too many for the hardware prefetcher, each of which runs
// into memory last written L batches ago. A few lines ahead of each tail
// are requested when it moves.
constexpr size_t kTailPrefetch = 16;

// Items ahead that the plan requests of the record's arrays and lists
// (entries, links, handovers, entry_of). The record was written L batches
// ago and comes from DRAM; the hardware prefetcher does not keep up with
// the vector passes (plan 0.56 -> 0.475 ms on the benchmark).
constexpr size_t kRecordPrefetch = 256;

// Rows whose state Push loads before handling them (see there).
constexpr size_t kPushChunk = 64;

std::string PartitionName(uint32_t p, const std::vector<uint32_t>& tables) {
  // Appends only: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
  // `" " + std::to_string(…)`.
  std::string s = "cache partition " + std::to_string(p) + " (tables";
  for (size_t k = 0; k < tables.size() && k < 8; ++k) s.append(" ").append(std::to_string(tables[k]));
  if (tables.size() > 8) s.append(" …");
  return s.append(")");
}

// Per table, where its rows start in the per-row state (owned tables only,
// in table order); the last entry is the total.
std::vector<uint64_t> TableBases(const PlannerOptions& options, const std::vector<uint32_t>& owned) {
  std::vector<bool> mine(options.table_rows.size(), false);
  for (uint32_t p : owned) {
    for (uint32_t t : options.partitions[p].tables) mine[t] = true;
  }
  std::vector<uint64_t> bases(options.table_rows.size() + 1, 0);
  uint64_t rows = 0;
  for (size_t t = 0; t < options.table_rows.size(); ++t) {
    bases[t] = rows;
    if (mine[t]) rows += options.table_rows[t];
  }
  bases.back() = rows;
  return bases;
}

}  // namespace

// What the first plan pass counts over a partition's entries; the second
// sizes its lists by them.
struct PassCounts {
  uint32_t shared = 0, critical = 0, shared_misses = 0, shared_evictions = 0;
};

namespace {

// Entry flags (LookaheadCore::Record::flags).
enum : uint8_t {
  kShared = 1,        // two or more trainers touch the row in this batch (set on push)
  kCached = 2,        // used by a batch in [b−L, b) (set on push)
  kNextAdjacent = 4,  // batch b+1 uses the row (set when planned, from the links)
  kHasNext = 8,       // a batch of b+1 … b+L uses the row (set when planned, from the links)
};

// A row is shared when two trainers touch it in this batch, when a later
// batch in the window uses it, or when private rows are off; otherwise it
// is private, used by its owner alone. Either way it is evicted after b
// when no batch of b+1 … b+L uses it. (LoadMasks is the AVX-512 form.)
inline bool IsShared(uint8_t flags, bool all_shared) { return ((flags & (kShared | kHasNext)) != 0) | all_shared; }

// What the plan passes read of one table's entries [begin, end), and how
// the options classify them.
struct TableEntries {
  const uint8_t* flags;
  const data::RowId* rows;
  const uint16_t* owners;
  uint32_t* slots;
  uint32_t begin, end;
  uint32_t table;
  bool all_shared, all_critical;
};

// The per-trainer side of the plan passes (LookaheadCore's scratch), each
// indexed by trainer.
struct OwnerLists {
  uint32_t* load;            // pass 1 counts: its private rows
  uint32_t* private_misses;  // pass 1 counts
  const uint32_t* group;     // pass 2: the slots of the private misses, by their index within a trainer's
  uint32_t* next_group;      // pass 2: its private misses given a slot so far
  RowSlot** own_prefetch;    // pass 2: write cursors into its lists
  RowSlot** own_rows;
};

// The second pass's write cursors into the lists every trainer shares, and
// the writers of the shared evictions in entry order (LookaheadCore::
// EmitLists).
struct SharedLists {
  RowSlot *prefetch, *critical, *delayed;
  Eviction* evictions;
  const uint32_t* writers;
};

// A private row, in the first pass: its owner's counts.
inline void CountPrivate(const TableEntries& e, const OwnerLists& own, uint32_t k) {
  ++own.load[e.owners[k]];
  own.private_misses[e.owners[k]] += !(e.flags[k] & kCached);
}

// The first plan pass, portable: counts the entries and each trainer's
// private rows and misses, calls take(k) for each shared miss in entry
// order (it gives the miss its slot), and appends the slots to retire after
// b (rows not used again, cached or shared; a private miss's slot is its
// group's) to retired[*n_retired …].
template <class Take>
void ClassifyPortable(const TableEntries& e, const OwnerLists& own, PassCounts* counts, uint32_t* retired,
                      uint32_t* n_retired, Take&& take) {
  uint32_t n = *n_retired;
  for (uint32_t k = e.begin; k < e.end; ++k) {
    const uint8_t f = e.flags[k];
    const bool has_next = (f & kHasNext) != 0;
    const bool is_shared = IsShared(f, e.all_shared);
    const bool cached = (f & kCached) != 0;
    counts->shared += is_shared;
    counts->critical += is_shared & (e.all_critical | ((f & kNextAdjacent) != 0));
    counts->shared_evictions += is_shared & !has_next;
    if (!is_shared) {
      CountPrivate(e, own, k);
    } else if (!cached) {
      take(k);
    }
    retired[n] = e.slots[k];
    n += (cached | is_shared) & !has_next;
  }
  *n_retired = n;
}

// A private row: a miss gets its owner's next group slot and goes to its
// private prefetch; every one goes to its owner's private rows.
inline void EmitPrivate(const TableEntries& e, const OwnerLists& own, uint32_t k) {
  const uint32_t o = e.owners[k];
  if (!(e.flags[k] & kCached)) {
    e.slots[k] = own.group[own.next_group[o]++];
    *own.own_prefetch[o]++ = {e.table, e.rows[k], e.slots[k]};
  }
  *own.own_rows[o]++ = {e.table, e.rows[k], e.slots[k]};
}

// The second plan pass, portable: each shared row to the shared lists
// (prefetch when a miss, critical or delayed), each private row to its
// owner's lists, and the rows evicted after b (shared ones not used again,
// with the next writer; cached private ones, with their owner) to the
// evictions, all in entry order.
inline void EmitPortable(const TableEntries& e, const OwnerLists& own, SharedLists* lists) {
  RowSlot *p = lists->prefetch, *c = lists->critical, *d = lists->delayed;
  Eviction* ev = lists->evictions;
  const uint32_t* writers = lists->writers;
  for (uint32_t k = e.begin; k < e.end; ++k) {
    const uint8_t f = e.flags[k];
    const bool is_shared = IsShared(f, e.all_shared);
    if (!is_shared) {  // about one row in six: the branch is cheaper than writing every list
      EmitPrivate(e, own, k);
      if (f & kCached) *ev++ = {e.table, e.rows[k], e.slots[k], e.owners[k]};
      continue;
    }
    const RowSlot row{e.table, e.rows[k], e.slots[k]};
    const bool adjacent = e.all_critical | ((f & kNextAdjacent) != 0);
    *p = row;
    p += !(f & kCached);
    *c = row;
    c += adjacent;
    *d = row;
    d += !adjacent;
    if (!(f & kHasNext)) *ev++ = {e.table, row.row, row.slot, *writers++};
  }
  *lists = {p, c, d, ev, writers};
}

#ifdef ACTORREC_HAVE_AVX512

// The AVX-512 passes take 16 entries at a time: their flags become masks,
// counts are popcounts, and the lists are written with compressing stores.
// A trainer's entries of a table are contiguous (push makes them slice by
// slice), so the private rows of a step nearly always have one owner, whose
// lists and counts take them at once; the steps whose private rows have two
// owners, and the shared misses (which take slots from the pool), go one
// by one, as in the portable passes. Same results, same order.
struct Masks {
  __mmask16 valid, has_next, shared, cached, adjacent;
};

// The first n lanes, n <= 16.
inline __mmask16 FirstLanes(uint32_t n) { return static_cast<__mmask16>((1u << n) - 1); }

ACTORREC_AVX512 inline Masks LoadMasks(const TableEntries& e, uint32_t k) {
  Masks m;
  m.valid = FirstLanes(std::min(e.end - k, 16u));
  // maskz: the unmasked forms trip GCC 12's -Wmaybe-uninitialized.
  const __m512i f = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_maskz_loadu_epi8(m.valid, e.flags + k));
  m.has_next = _mm512_mask_test_epi32_mask(m.valid, f, _mm512_set1_epi32(kHasNext));
  m.shared = e.all_shared ? m.valid : _mm512_mask_test_epi32_mask(m.valid, f, _mm512_set1_epi32(kShared | kHasNext));
  m.cached = _mm512_mask_test_epi32_mask(m.valid, f, _mm512_set1_epi32(kCached));
  m.adjacent = e.all_critical ? m.valid : _mm512_mask_test_epi32_mask(m.valid, f, _mm512_set1_epi32(kNextAdjacent));
  return m;
}

// The trainer that owns every lane of `lanes` (not empty), or -1 when they
// have two owners. Owners do not decrease within a table.
inline int32_t OneOwner(const TableEntries& e, uint32_t k, uint32_t lanes) {
  const uint16_t first = e.owners[k + static_cast<uint32_t>(__builtin_ctz(lanes))];
  const uint16_t last = e.owners[k + 31 - static_cast<uint32_t>(__builtin_clz(lanes))];
  return first == last ? first : -1;
}

template <class Take>
ACTORREC_AVX512 void ClassifyAvx512(const TableEntries& e, const OwnerLists& own, PassCounts* counts,
                                         uint32_t* retired, uint32_t* n_retired, Take&& take) {
  uint32_t n = *n_retired;
  for (uint32_t k = e.begin; k < e.end; k += 16) {
    __builtin_prefetch(e.owners + k + kRecordPrefetch);  // the record's, from DRAM
    const Masks m = LoadMasks(e, k);
    counts->shared += static_cast<uint32_t>(__builtin_popcount(m.shared));
    counts->critical += static_cast<uint32_t>(__builtin_popcount(m.shared & m.adjacent));
    counts->shared_evictions += static_cast<uint32_t>(__builtin_popcount(m.shared & ~m.has_next));
    const uint32_t is_private = m.valid & ~m.shared;
    if (is_private != 0) {
      const int32_t o = OneOwner(e, k, is_private);
      if (o >= 0) {
        own.load[o] += static_cast<uint32_t>(__builtin_popcount(is_private));
        own.private_misses[o] += static_cast<uint32_t>(__builtin_popcount(is_private & ~m.cached));
      } else {
        for (uint32_t bits = is_private; bits != 0; bits &= bits - 1) {
          CountPrivate(e, own, k + static_cast<uint32_t>(__builtin_ctz(bits)));
        }
      }
    }
    for (uint32_t bits = m.shared & ~m.cached; bits != 0; bits &= bits - 1) {
      take(k + static_cast<uint32_t>(__builtin_ctz(bits)));
    }
    // After take: the shared misses have their slots.
    const __mmask16 retire = (m.cached | m.shared) & ~m.has_next & m.valid;
    _mm512_mask_compressstoreu_epi32(retired + n, retire, _mm512_maskz_loadu_epi32(m.valid, e.slots + k));
    n += static_cast<uint32_t>(__builtin_popcount(retire));
  }
  *n_retired = n;
}

// Appends the rows and slots of the lanes in `lanes` to `out` as RowSlots
// of `table`, in lane order; returns the new end. Dword j of the 16
// RowSlots (48 dwords, three vectors) is field j mod 3 (table, row, slot)
// of RowSlot j / 3.
ACTORREC_AVX512 inline RowSlot* AppendRowSlots(RowSlot* out, __m512i table, __m512i rows, __m512i slots,
                                                    __mmask16 lanes) {
  static_assert(sizeof(RowSlot) == 12, "RowSlot is three dwords: table, row, slot");
  const uint32_t n = static_cast<uint32_t>(__builtin_popcount(lanes));
  const __m512i r = _mm512_maskz_compress_epi32(lanes, rows), s = _mm512_maskz_compress_epi32(lanes, slots);
  // permutex2var indices: row i is index i of r, slot i index 16 + i (of s).
  const __m512i pick0 = _mm512_setr_epi32(0, 0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0);
  const __m512i pick1 = _mm512_setr_epi32(5, 21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10);
  const __m512i pick2 = _mm512_setr_epi32(26, 0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31);
  constexpr __mmask16 kTable0 = 0x9249, kTable1 = 0x4924, kTable2 = 0x2492;  // dwords j ≡ 0 mod 3
  const uint64_t words = (uint64_t{1} << (3 * n)) - 1;
  int* const at = reinterpret_cast<int*>(out);
  _mm512_mask_storeu_epi32(at, static_cast<__mmask16>(words),
                           _mm512_mask_mov_epi32(_mm512_permutex2var_epi32(r, pick0, s), kTable0, table));
  _mm512_mask_storeu_epi32(at + 16, static_cast<__mmask16>(words >> 16),
                           _mm512_mask_mov_epi32(_mm512_permutex2var_epi32(r, pick1, s), kTable1, table));
  _mm512_mask_storeu_epi32(at + 32, static_cast<__mmask16>(words >> 32),
                           _mm512_mask_mov_epi32(_mm512_permutex2var_epi32(r, pick2, s), kTable2, table));
  return out + n;
}

// AppendRowSlots for Evictions (table, row, slot, writer: four dwords, so
// four RowSlot-like vectors of four evictions each).
ACTORREC_AVX512 inline Eviction* AppendEvictions(Eviction* out, __m512i table, __m512i rows, __m512i slots,
                                                      __m512i writers, __mmask16 lanes) {
  static_assert(sizeof(Eviction) == 16, "Eviction is four dwords: table, row, slot, writer");
  const uint32_t n = static_cast<uint32_t>(__builtin_popcount(lanes));
  const __m512i r = _mm512_maskz_compress_epi32(lanes, rows), s = _mm512_maskz_compress_epi32(lanes, slots);
  const __m512i w = _mm512_maskz_compress_epi32(lanes, writers);
  const uint64_t words = n == 16 ? ~uint64_t{0} : (uint64_t{1} << (4 * n)) - 1;
  int* const at = reinterpret_cast<int*>(out);
  const __m512i four = _mm512_set1_epi32(4);
  // Eviction i of the vector: row (index i of r) in dword 4i + 1, slot
  // (16 + i: of s) in 4i + 2, writer (i of w) in 4i + 3.
  __m512i pick_row_slot = _mm512_setr_epi32(0, 0, 16, 0, 0, 1, 17, 0, 0, 2, 18, 0, 0, 3, 19, 0);
  __m512i pick_writer = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3);
  for (int q = 0; q < 4; ++q) {
    __m512i v = _mm512_permutex2var_epi32(r, pick_row_slot, s);
    v = _mm512_mask_permutexvar_epi32(v, 0x8888, pick_writer, w);
    v = _mm512_mask_mov_epi32(v, 0x1111, table);
    _mm512_mask_storeu_epi32(at + 16 * q, static_cast<__mmask16>(words >> (16 * q)), v);
    pick_row_slot = _mm512_add_epi32(pick_row_slot, four);
    pick_writer = _mm512_add_epi32(pick_writer, four);
  }
  return out + n;
}

ACTORREC_AVX512 void EmitAvx512(const TableEntries& e, const OwnerLists& own, SharedLists* lists) {
  RowSlot *p = lists->prefetch, *c = lists->critical, *d = lists->delayed;
  Eviction* ev = lists->evictions;
  const uint32_t* writers = lists->writers;
  const __m512i table = _mm512_set1_epi32(static_cast<int>(e.table));
  for (uint32_t k = e.begin; k < e.end; k += 16) {
    // The record's rows come from DRAM (it was pushed L batches ago; the
    // first pass brought its owners in): requested a few steps ahead.
    __builtin_prefetch(e.rows + k + kRecordPrefetch);
    const Masks m = LoadMasks(e, k);
    const __m512i rows = _mm512_maskz_loadu_epi32(m.valid, e.rows + k);
    __m512i slots = _mm512_maskz_loadu_epi32(m.valid, e.slots + k);
    p = AppendRowSlots(p, table, rows, slots, m.shared & ~m.cached);
    c = AppendRowSlots(c, table, rows, slots, m.shared & m.adjacent);
    d = AppendRowSlots(d, table, rows, slots, m.shared & ~m.adjacent);
    const __mmask16 is_private = m.valid & ~m.shared;
    if (is_private != 0) {
      const int32_t o = OneOwner(e, k, is_private);
      if (o >= 0) {
        const __mmask16 misses = is_private & ~m.cached;
        const uint32_t count = static_cast<uint32_t>(__builtin_popcount(misses));
        if (count != 0) {
          const __m512i group = _mm512_maskz_loadu_epi32(FirstLanes(count), own.group + own.next_group[o]);
          own.next_group[o] += count;
          slots = _mm512_mask_expand_epi32(slots, misses, group);
          _mm512_mask_storeu_epi32(e.slots + k, misses, slots);
          own.own_prefetch[o] = AppendRowSlots(own.own_prefetch[o], table, rows, slots, misses);
        }
        own.own_rows[o] = AppendRowSlots(own.own_rows[o], table, rows, slots, is_private);
      } else {
        // Private misses are not evicted (their group is), so the slots of
        // the evictions below need no reload.
        for (uint32_t bits = is_private; bits != 0; bits &= bits - 1) {
          EmitPrivate(e, own, k + static_cast<uint32_t>(__builtin_ctz(bits)));
        }
      }
    }
    // Evictions: shared rows not used again, with the next writers, and
    // cached private rows, with their owners.
    const __mmask16 shared_out = m.shared & ~m.has_next;
    const __mmask16 private_out = is_private & m.cached;
    const uint32_t written = static_cast<uint32_t>(__builtin_popcount(shared_out));
    const __m512i next_writers =
        written == 0 ? _mm512_setzero_si512()
                     : _mm512_maskz_expand_epi32(shared_out, _mm512_maskz_loadu_epi32(FirstLanes(written), writers));
    writers += written;
    const __m512i owners = _mm512_maskz_cvtepu16_epi32(m.valid, _mm256_maskz_loadu_epi16(m.valid, e.owners + k));
    ev = AppendEvictions(ev, table, rows, slots, _mm512_mask_mov_epi32(next_writers, private_out, owners),
                         shared_out | private_out);
  }
  *lists = {p, c, d, ev, writers};
}

// unique_slots[u] = slots[entry_of[u]], 16 at a time.
ACTORREC_AVX512 void GatherSlotsAvx512(const uint32_t* slots, const uint32_t* entry_of, size_t n,
                                            uint32_t* out) {
  size_t u = 0;
  for (; u + 16 <= n; u += 16) {
    __builtin_prefetch(entry_of + u + kRecordPrefetch);  // the record's, from DRAM
    const __m512i index = _mm512_loadu_si512(entry_of + u);
    // The masked form: the unmasked one trips GCC 12's -Wmaybe-uninitialized.
    _mm512_storeu_si512(out + u, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xFFFF, index,
                                                              reinterpret_cast<const int*>(slots), 4));
  }
  for (; u < n; ++u) out[u] = slots[entry_of[u]];
}
#endif

// The plan passes with the kernel the core was built with (`vectorized`:
// the AVX-512 loops, which this build has when it defines
// ACTORREC_HAVE_AVX512).
template <class Take>
void Classify([[maybe_unused]] bool vectorized, const TableEntries& e, const OwnerLists& own, PassCounts* counts,
              uint32_t* retired, uint32_t* n_retired, Take&& take) {
#ifdef ACTORREC_HAVE_AVX512
  if (vectorized) return ClassifyAvx512(e, own, counts, retired, n_retired, take);
#endif
  ClassifyPortable(e, own, counts, retired, n_retired, take);
}

void Emit([[maybe_unused]] bool vectorized, const TableEntries& e, const OwnerLists& own, SharedLists* lists) {
#ifdef ACTORREC_HAVE_AVX512
  if (vectorized) return EmitAvx512(e, own, lists);
#endif
  EmitPortable(e, own, lists);
}

// out[u] = slots[entry_of[u]] for u < n.
void GatherSlots([[maybe_unused]] bool vectorized, const uint32_t* slots, const uint32_t* entry_of, size_t n,
                 uint32_t* out) {
#ifdef ACTORREC_HAVE_AVX512
  if (vectorized) return GatherSlotsAvx512(slots, entry_of, n, out);
#endif
  for (size_t u = 0; u < n; ++u) out[u] = slots[entry_of[u]];
}

// Table t's entries of `record` (a LookaheadCore::Record) for the plan
// passes, with `slots` the core's scratch.
template <class Record>
TableEntries EntriesOf(const Record& record, uint32_t* slots, uint32_t t, bool all_shared, bool all_critical) {
  return {record.flags.data(), record.rows.data(), record.owners.data(), slots, record.table_begin[t],
          record.table_end[t], t, all_shared, all_critical};
}

}  // namespace

LookaheadCore::LookaheadCore(const PlannerOptions& options, std::vector<uint32_t> owned, uint32_t lookahead,
                             bool bounded, bool may_flush)
    : trainers_(options.trainers),
      vectorized_(UseAvx512(options.kernel)),
      all_shared_(!options.private_rows),
      all_critical_(!options.delayed_sync),
      tables_(static_cast<uint32_t>(options.table_rows.size())),
      lookahead_(lookahead),
      first_batch_(static_cast<int64_t>(options.first_batch)),
      owned_(std::move(owned)),
      table_base_(TableBases(options, owned_)),
      state_(table_base_.back()),
      records_(size_t{lookahead} + 1),
      may_flush_(may_flush),
      private_misses_(trainers_),
      load_(trainers_),
      quota_(trainers_),
      next_group_(trainers_),
      own_prefetch_(trainers_),
      own_rows_(trainers_),
      trainer_occupancy_(trainers_),
      flush_private_(trainers_) {
  ACTORREC_ASSERT(lookahead >= 1, "the core plans with a lookahead of at least 1");
  ACTORREC_ASSERT(!may_flush || bounded, "a flush needs a bounded core");
  for (uint32_t p : owned_) {
    const Partition& part = options.partitions[p];
    part_tables_.push_back(part.tables);
    std::sort(part_tables_.back().begin(), part_tables_.back().end());
    owned_tables_.insert(owned_tables_.end(), part.tables.begin(), part.tables.end());
    pools_.emplace_back(FirstSlot(options, p), bounded ? part.capacity : UINT32_MAX - FirstSlot(options, p),
                        lookahead);
    unused_.emplace_back(size_t{lookahead + 1} * trainers_, 0);
    unused_sum_.emplace_back(trainers_, 0);
  }
  std::sort(owned_tables_.begin(), owned_tables_.end());
  for (Record& r : records_) {
    r.table_begin.assign(tables_, 0);
    r.table_end.assign(tables_, 0);
    r.slice_begin.assign(size_t{trainers_} * tables_, 0);
    r.link_runs.assign(lookahead, 0);
  }
}

void LookaheadCore::Push(const BatchRows& rows) {
  ACTORREC_ASSERT(!WindowFull(), "push only while the window has room");
  ACTORREC_ASSERT(pushed_ < UINT32_MAX - 1, "batch numbers fit the per-row state");
  const uint32_t j = static_cast<uint32_t>(pushed_);
  // Records by ring index, computed here without a division per row.
  const uint32_t ring = static_cast<uint32_t>(j % records_.size());
  const uint32_t ring_size = static_cast<uint32_t>(records_.size());
  Record& record = records_[ring];
  size_t slice_rows = 0;
  for (uint32_t t : owned_tables_) {
    for (uint32_t w = 0; w < trainers_; ++w) slice_rows += rows.slice(w, t).rows.size();
  }
  // At most one entry per slice row, plus one (the last) that the loop
  // below writes where a row has no flag to set.
  record.rows.resize(slice_rows + 1);
  record.owners.resize(slice_rows + 1);
  record.flags.resize(slice_rows + 1);
  record.entry_of.resize(slice_rows);
  data::RowId* const entry_rows = record.rows.data();
  uint16_t* const owners = record.owners.data();
  uint8_t* const flags = record.flags.data();
  uint32_t* const entry_of = record.entry_of.data();
  const uint32_t no_entry = static_cast<uint32_t>(slice_rows);
  // The end of every record's links, by ring index, and one more that
  // rows without a link write to (and do not advance): the loop has no
  // branches on the row's history, which no predictor can guess.
  link_ends_.resize(size_t{ring_size} + 1);
  for (uint32_t r = 0; r < ring_size; ++r) link_ends_[r] = records_[r].links.end;
  // This batch's links to each unplanned earlier one start a new run there.
  for (uint32_t age = 1; age <= j - planned_; ++age) {
    Record& earlier = records_[ring >= age ? ring - age : ring + ring_size - age];
    earlier.link_runs[age - 1] = static_cast<uint32_t>(earlier.links.end - earlier.links.begin());
  }
  Link unlinked;
  link_ends_[ring_size] = &unlinked;
  Link** const link_ends = link_ends_.data();
  // Values used in the loop live in locals: a store to a flag (a byte, which
  // may alias anything) would otherwise have them reloaded, row after row.
  const uint32_t lookahead = lookahead_, j_plus_one = j + 1;
  uint32_t size = 0, k = 0;
  for (uint32_t t : owned_tables_) {
    record.table_begin[t] = size;
    RowState* const state = state_.get() + table_base_[t];
    for (uint32_t w = 0; w < trainers_; ++w) {
      record.slice_begin[size_t{w} * tables_ + t] = k;
      const data::RowId* const ids = rows.slice(w, t).rows.data();
      const size_t n = rows.slice(w, t).rows.size();
      // The table's next slice: its first rows' state is requested while
      // this slice's last rows are handled.
      const data::RowId* next_ids = nullptr;
      size_t next_n = 0;
      if (w + 1 < trainers_) {
        next_ids = rows.slice(w + 1, t).rows.data();
        next_n = rows.slice(w + 1, t).rows.size();
      }
      // Chunks of rows in two steps. First the chunk's states are loaded
      // (independent loads, whose misses overlap) and the next chunk's
      // requested; then each row is handled without a branch on its state,
      // which is no longer a miss away. A row occurs once in a slice, so a
      // chunk holds no row twice and its loads see every earlier store.
      for (size_t c = 0; c < n; c += kPushChunk) {
        const size_t m = std::min(kPushChunk, n - c);
        RowState before[kPushChunk];
        for (size_t i = 0; i < m; ++i) {
          const size_t ahead = c + i + kPrefetchDistance;
          if (ahead < n) {
            __builtin_prefetch(state + ids[ahead], 1);
          } else if (ahead - n < next_n) {
            __builtin_prefetch(state + next_ids[ahead - n], 1);
          }
          before[i] = state[ids[c + i]];
        }
        for (size_t i = 0; i < m; ++i) {
          const data::RowId row = ids[c + i];
          const uint32_t last_use = before[i].last_use, last_pos = before[i].last_pos;
          const uint32_t age = j_plus_one - last_use;  // batches since the previous use
          const uint32_t again = age == 0;             // an earlier slice of j touched the row
          // A use within L of the previous one: that batch, unplanned (it
          // is planned once its L successors are pushed), must hand its
          // slot on. Masks, not ?: (which GCC may turn back into branches).
          const uint32_t linked = static_cast<uint32_t>(last_use != 0) & static_cast<uint32_t>(age - 1 < lookahead);
          entry_rows[size] = row;
          owners[size] = static_cast<uint16_t>(w);
          flags[size] = static_cast<uint8_t>(linked * kCached);
          const uint32_t again_mask = 0u - again;
          flags[(last_pos & again_mask) | (no_entry & ~again_mask)] |= kShared;
          // back in [1, L] when linked: the previous use's record is in the ring.
          const uint32_t back_ring = ring >= age ? ring - age : ring + ring_size - age;
          const uint32_t link_mask = 0u - linked;
          Link*& end = link_ends[(back_ring & link_mask) | (ring_size & ~link_mask)];
          *end = Link{last_pos, size};
          __builtin_prefetch(end + kTailPrefetch, 1);
          end += linked;
          const uint32_t pos = (last_pos & again_mask) | (size & ~again_mask);
          entry_of[k++] = pos;
          state[row] = RowState{j_plus_one, pos};
          size += 1 - again;
        }
      }
    }
    record.table_end[t] = size;
  }
  for (uint32_t r = 0; r < ring_size; ++r) records_[r].links.end = link_ends_[r];
  record.links.Reset(size);
  record.handovers.Reset(size);
  // The entry arrays keep their length (their tails unused): shrinking them
  // would have the next resize zero-fill the tails again.
  ++pushed_;
}

uint32_t LookaheadCore::Later(uint64_t b) const {
  return static_cast<uint32_t>(std::min<uint64_t>(lookahead_, pushed_ - 1 - b));
}

std::pair<const LookaheadCore::Link*, const LookaheadCore::Link*> LookaheadCore::LinkRun(const Record& record,
                                                                                       uint32_t a,
                                                                                       uint32_t later) const {
  const Link* const links = record.links.begin();
  return {links + record.link_runs[a - 1], a < later ? links + record.link_runs[a] : record.links.end};
}

void LookaheadCore::MarkRecord(uint64_t b) {
  Record& record = RecordOf(b);
  // Entries go in table order: the last owned table's end is their count.
  const size_t used = owned_tables_.empty() ? 0 : record.table_end[owned_tables_.back()];
  if (slots_.size() < used) slots_.resize(used);
  uint8_t* const flags = record.flags.data();
  uint32_t* const slots = slots_.data();
  {
    // The record was written L batches ago and is cold. One sequential
    // sweep brings its flags in at streaming speed; the link marks below
    // land at random in them and would each wait on DRAM.
    uint8_t touched = 0;
    for (size_t k = 0; k < used; k += 64) touched |= flags[k];
    asm volatile("" : : "r"(touched));
  }
  // The record's links, by the later batch b + a they came from (a run
  // each): rows that b + 1 uses (the first run) are critical.
  const uint32_t later = Later(b);
  for (uint32_t a = 1; a <= later; ++a) {
    const uint8_t mark = static_cast<uint8_t>(kHasNext | (a == 1 ? kNextAdjacent : 0));
    for (auto [l, end] = LinkRun(record, a, later); l != end; ++l) {
      __builtin_prefetch(l + kRecordPrefetch);  // the links come from DRAM
      flags[l->from] |= mark;
    }
  }
  for (const Handover* h = record.handovers.begin(); h != record.handovers.end; ++h) {
    __builtin_prefetch(h + kRecordPrefetch);  // from DRAM too
    slots[h->pos] = h->slot;
  }
}

Status LookaheadCore::PlanNext(BatchRows* rows, BatchPlan* plan, bool end_window) {
  ACTORREC_ASSERT(planned_ < pushed_ && !flushed_, "plan only pushed batches, and none after a flush");
  ACTORREC_ASSERT(!end_window || may_flush_, "only a core that may flush ends its window on request");
  const uint64_t b = planned_;
  Record& record = RecordOf(b);
  if (plan != nullptr) {
    // The lists keep their length from the last batch and are overwritten
    // up to fill_ (growing a vector from empty would zero it first), then
    // cut to what was written.
    plan->trainers.resize(trainers_);
    plan->batch = first_batch_ + static_cast<int64_t>(b);
  }
  // What later batches and earlier plans told this record: which rows are
  // used again, and the slots of the cached rows.
  MarkRecord(b);
  flushed_ = end_window;
  bool ends = false;
  if (Status s = PlanPartitions(b, record, plan, &ends); !s.ok()) return s;
  if (ends) {
    // A partition cannot go on with L: the whole batch ends the window
    // (lookahead_core.hpp), planned again from the first partition.
    flushed_ = true;
    if (Status s = PlanPartitions(b, record, plan, &ends); !s.ok()) return s;
  }
  // Rows used again keep their slot (they are shared, so it was set above);
  // after a flush none is.
  const uint32_t later = flushed_ ? 0 : Later(b);
  for (uint32_t a = 1; a <= later; ++a) {
    BoundedList<Handover>& to = RecordOf(b + a).handovers;
    Handover* out = to.end;
    for (auto [l, end] = LinkRun(record, a, later); l != end; ++l) {
      *out = Handover{l->to_pos, slots_[l->from]};
      __builtin_prefetch(out + kTailPrefetch, 1);
      ++out;
    }
    to.end = out;
  }
  if (plan != nullptr) {
    // Before the first L + 1 batches nothing this run evicted needs waiting
    // for; first_batch − 1 is then the barrier, whose write-backs the
    // checkpoint the run started from already holds. A flush looked at no
    // later batch: lookahead 0, barrier b − 1.
    const uint32_t window = flushed_ ? 0 : lookahead_;
    plan->lookahead = window;
    const int64_t barrier = static_cast<int64_t>(b) - window - 1;
    plan->barrier = first_batch_ + (barrier >= 0 ? barrier : -1);
    plan->occupancy = occupancy_;
    for (uint32_t w = 0; w < trainers_; ++w) plan->trainers[w].occupancy = trainer_occupancy_[w];
    plan->prefetch.resize(fill_.prefetch);
    plan->critical.resize(fill_.critical);
    plan->delayed.resize(fill_.delayed);
    plan->evictions.resize(fill_.evictions);
    for (uint32_t w = 0; w < trainers_; ++w) {
      plan->trainers[w].private_prefetch.resize(fill_.private_prefetch[w]);
      plan->trainers[w].private_rows.resize(fill_.private_rows[w]);
    }
    BuildFeatures(record, rows, plan);
  }
  ++planned_;
  return Status::Ok();
}

bool LookaheadCore::MustEndWindow() {
  ACTORREC_ASSERT(planned_ < pushed_ && !flushed_, "ask only of pushed batches, and none after a flush");
  if (!may_flush_) return false;
  const uint64_t b = planned_;
  MarkRecord(b);
  const Record& record = RecordOf(b);
  for (size_t i = 0; i < owned_.size(); ++i) {
    SlotPool& pool = pools_[i];
    // PlanNext calls it again: nothing is retired after b in between, so
    // that call releases nothing more.
    pool.BeginBatch(b);
    PassCounts counts;
    uint32_t retired = 0;
    const uint32_t group = ClassifyPartition(i, record, &counts, &retired, [](uint32_t) {});
    if (EndsWindow(i, b, pool.in_use(), pool.quarantined(), counts.shared_misses + group)) return true;
  }
  return false;
}

Status LookaheadCore::PlanPartitions(uint64_t b, Record& record, BatchPlan* plan, bool* ends) {
  *ends = false;
  if (plan != nullptr) fill_.Reset(trainers_);
  occupancy_ = 0;
  std::fill(trainer_occupancy_.begin(), trainer_occupancy_.end(), 0);
  for (size_t i = 0; i < owned_.size() && !*ends; ++i) {
    if (Status s = PlanPartition(i, b, record, plan, ends); !s.ok()) return s;
  }
  return Status::Ok();
}

template <class Take>
uint32_t LookaheadCore::ClassifyPartition(size_t i, const Record& record, PassCounts* counts, uint32_t* retired,
                                          Take&& take) {
  uint32_t rows = 0;
  for (uint32_t t : part_tables_[i]) rows += record.table_end[t] - record.table_begin[t];
  retired_.resize(rows);
  *counts = PassCounts{};
  *retired = 0;
  std::fill(private_misses_.begin(), private_misses_.end(), 0);
  std::fill(load_.begin(), load_.end(), 0);
  const OwnerLists own{load_.data(), private_misses_.data(), nullptr, nullptr, nullptr, nullptr};
  auto count_and_take = [&](uint32_t k) {  // a shared miss
    ++counts->shared_misses;
    take(k);
  };
  for (uint32_t t : part_tables_[i]) {
    Classify(vectorized_, EntriesOf(record, slots_.data(), t, all_shared_, all_critical_), own, counts,
             retired_.data(), retired, count_and_take);
  }
  return *std::max_element(private_misses_.begin(), private_misses_.end());
}

bool LookaheadCore::EndsWindow(size_t i, uint64_t b, uint32_t in_use, uint32_t quarantined, uint32_t takes) {
  const uint64_t after = uint64_t{in_use} + takes;
  if (after > pools_[i].capacity()) return true;
  return !NextFlushFits(i, b, static_cast<uint32_t>(after - quarantined));
}

Status LookaheadCore::PlanPartition(size_t i, uint64_t b, Record& record, BatchPlan* plan, bool* ends) {
  SlotPool& pool = pools_[i];
  inherited_.clear();
  if (flushed_) {
    // End the window at b: no later batch is looked at (the links' marks
    // go), every slot not holding a row is free (barrier b − 1), and pass 1
    // runs on that.
    for (uint32_t t : part_tables_[i]) {
      for (uint32_t k = record.table_begin[t]; k < record.table_end[t]; ++k) {
        record.flags[k] &= static_cast<uint8_t>(~(kHasNext | kNextAdjacent));
      }
    }
    CollectHeld(i, b, record);
    pool.KeepOnly(held_);
    std::fill(unused_[i].begin(), unused_[i].end(), 0);
    std::fill(unused_sum_[i].begin(), unused_sum_[i].end(), 0);
  } else {
    pool.BeginBatch(b);
  }
  const uint32_t in_use_before = pool.in_use();

  // Pass 1: classify the rows, give shared misses their slots, retire the
  // slots of rows not used again (private misses retire their group below).
  // Everything it reads is in the record and slots_.
  uint32_t* const slots = slots_.data();
  bool short_of_slots = false;
  PassCounts counts;
  uint32_t retired = 0;
  const uint32_t group =
      ClassifyPartition(i, record, &counts, &retired, [&](uint32_t k) { short_of_slots |= !pool.Take(&slots[k]); });
  group_.clear();
  for (uint32_t g = 0; g < group && !short_of_slots; ++g) {
    uint32_t slot = 0;
    short_of_slots = !pool.Take(&slot);
    group_.push_back(slot);
  }
  const uint64_t needed = uint64_t{in_use_before} + counts.shared_misses + group;
  if (!flushed_ && may_flush_ &&
      EndsWindow(i, b, in_use_before, pool.quarantined(), counts.shared_misses + group)) {
    *ends = true;
    return Status::Ok();
  }
  if (short_of_slots) {
    const int64_t batch = first_batch_ + static_cast<int64_t>(b);
    if (flushed_) {
      // Only at a core's first batch (else the batch before checked that
      // this flush fits): nothing else is held, the batch's rows alone are
      // too many.
      return Status::InvalidArgument(
          "the cache is too small for batch " + std::to_string(batch) +
          " even with lookahead 0 (every cached row written back first): " +
          PartitionName(owned_[i], part_tables_[i]) + " needs " + std::to_string(needed) +
          " slots per trainer for the batch's own rows but has " + std::to_string(pool.capacity()) +
          ": raise its capacity to at least " + std::to_string(needed));
    }
    return Status::InvalidArgument(PartitionName(owned_[i], part_tables_[i]) + " needs " + std::to_string(needed) +
                                   " slots per trainer at batch " + std::to_string(batch) + " with lookahead " +
                                   std::to_string(lookahead_) + " but has " + std::to_string(pool.capacity()) +
                                   ": raise its capacity or lower the lookahead");
  }
  pool.Retire(b, retired_.data(), retired);
  pool.Retire(b, group_.data(), group);
  for (const RowSlot& r : inherited_) pool.Retire(b, &r.slot, 1);
  const uint32_t in_use = pool.in_use();
  occupancy_ += in_use;
  // Group slot g of b is trainer w's only when w has more than g private
  // misses; the others leave it empty until it leaves quarantine.
  uint32_t* const unused = unused_[i].data() + (b % records_.size()) * trainers_;
  uint32_t* const unused_sum = unused_sum_[i].data();
  for (uint32_t w = 0; w < trainers_; ++w) {
    unused_sum[w] = unused_sum[w] - unused[w] + (group - private_misses_[w]);
    unused[w] = group - private_misses_[w];
    trainer_occupancy_[w] += in_use - unused_sum[w];
  }
  if (plan == nullptr) return Status::Ok();
  EmitLists(i, b, record, counts, plan);
  return Status::Ok();
}

bool LookaheadCore::NextFlushFits(size_t i, uint64_t b, uint32_t held) {
  if (pushed_ <= b + 1) return true;  // b is the last batch
  const Record& next = RecordOf(b + 1);
  const uint32_t capacity = pools_[i].capacity();
  uint32_t entries = 0;
  for (uint32_t t : part_tables_[i]) entries += next.table_end[t] - next.table_begin[t];
  if (uint64_t{held} + entries <= capacity) return true;  // even every entry a miss of its own slot fits
  // b+1's misses as a flush places them: shared ones a slot each, private
  // ones (no later batch is looked at) packed by trainer.
  uint32_t shared = 0;
  std::fill(flush_private_.begin(), flush_private_.end(), 0);
  for (uint32_t t : part_tables_[i]) {
    for (uint32_t k = next.table_begin[t]; k < next.table_end[t]; ++k) {
      const uint8_t f = next.flags[k];
      if (f & kCached) continue;
      if ((f & kShared) || all_shared_) {
        ++shared;
      } else {
        ++flush_private_[next.owners[k]];
      }
    }
  }
  const uint32_t group = *std::max_element(flush_private_.begin(), flush_private_.end());
  return uint64_t{held} + shared + group <= capacity;
}

void LookaheadCore::CollectHeld(size_t i, uint64_t b, const Record& record) {
  held_.clear();
  for (uint32_t t : part_tables_[i]) {
    for (uint32_t k = record.table_begin[t]; k < record.table_end[t]; ++k) {
      if (record.flags[k] & kCached) held_.push_back(slots_[k]);
    }
  }
  // A row cached now that b does not use has handed its slot over to the
  // record of its next use, a later batch of the window.
  for (uint64_t j = b + 1; j < pushed_; ++j) {
    const Record& later = RecordOf(j);
    for (const Handover* h = later.handovers.begin(); h != later.handovers.end; ++h) {
      for (uint32_t t : part_tables_[i]) {
        if (h->pos < later.table_begin[t] || h->pos >= later.table_end[t]) continue;
        inherited_.push_back({t, later.rows[h->pos], h->slot});
        held_.push_back(h->slot);
      }
    }
  }
}

void LookaheadCore::EmitLists(size_t i, uint64_t b, Record& record, const PassCounts& counts, BatchPlan* plan) {
  uint32_t private_rows = 0, private_misses = 0;
  for (uint32_t w = 0; w < trainers_; ++w) {
    private_rows += load_[w];
    private_misses += private_misses_[w];
  }
  // Each list is written through a cursor from its fill, with room for its
  // exact count + 1: a row not meant for a list is written one past its
  // last row, and not counted.
  auto room = [](auto& list, uint32_t fill, uint32_t count) {
    if (list.size() < size_t{fill} + count + 1) list.resize(size_t{fill} + count + 1);
    return list.data() + fill;
  };
  SharedLists lists{room(plan->prefetch, fill_.prefetch, counts.shared_misses),
                    room(plan->critical, fill_.critical, counts.critical),
                    room(plan->delayed, fill_.delayed, counts.shared - counts.critical),
                    room(plan->evictions, fill_.evictions,
                         counts.shared_evictions + (private_rows - private_misses) + uint32_t(inherited_.size())),
                    nullptr};
  for (uint32_t w = 0; w < trainers_; ++w) {
    BatchPlan::Own& own = plan->trainers[w];
    own_prefetch_[w] = room(own.private_prefetch, fill_.private_prefetch[w], private_misses_[w]);
    own_rows_[w] = room(own.private_rows, fill_.private_rows[w], load_[w]);
    next_group_[w] = 0;
  }
  // The writers of the shared evictions, in entry order: the next trainer
  // in turn, from one that rotates with the batch, that has write-backs to
  // give (SetWriterQuotas).
  const uint32_t shared_evictions = counts.shared_evictions + static_cast<uint32_t>(inherited_.size());
  SetWriterQuotas(b, shared_evictions);
  writers_.resize(shared_evictions);
  uint32_t writer = static_cast<uint32_t>(b % trainers_);
  for (uint32_t& w : writers_) {
    while (quota_[writer] == 0) writer = writer + 1 == trainers_ ? 0 : writer + 1;
    --quota_[writer];
    w = writer;
    writer = writer + 1 == trainers_ ? 0 : writer + 1;
  }
  lists.writers = writers_.data();
  const OwnerLists own{load_.data(),         private_misses_.data(), group_.data(),
                       next_group_.data(),   own_prefetch_.data(),   own_rows_.data()};
  for (uint32_t t : part_tables_[i]) {
    Emit(vectorized_, EntriesOf(record, slots_.data(), t, all_shared_, all_critical_), own, &lists);
  }
  // A flush's inherited rows, after the batch's own, with the writers left.
  for (const RowSlot& r : inherited_) *lists.evictions++ = {r.table, r.row, r.slot, *lists.writers++};
  fill_.prefetch = static_cast<uint32_t>(lists.prefetch - plan->prefetch.data());
  fill_.critical = static_cast<uint32_t>(lists.critical - plan->critical.data());
  fill_.delayed = static_cast<uint32_t>(lists.delayed - plan->delayed.data());
  fill_.evictions = static_cast<uint32_t>(lists.evictions - plan->evictions.data());
  for (uint32_t w = 0; w < trainers_; ++w) {
    fill_.private_prefetch[w] = static_cast<uint32_t>(own_prefetch_[w] - plan->trainers[w].private_prefetch.data());
    fill_.private_rows[w] = static_cast<uint32_t>(own_rows_[w] - plan->trainers[w].private_rows.data());
  }
}

void LookaheadCore::SetWriterQuotas(uint64_t b, uint32_t shared) {
  // Water-filling: the lowest level such that raising every trainer's load
  // to it absorbs `shared` write-backs.
  const uint32_t lowest = *std::min_element(load_.begin(), load_.end());
  uint64_t lo = lowest, hi = uint64_t{lowest} + shared;
  auto room = [&](uint64_t level) {
    uint64_t sum = 0;
    for (uint32_t l : load_) sum += level > l ? level - l : 0;
    return sum;
  };
  while (lo < hi) {
    const uint64_t mid = (lo + hi) / 2;
    if (room(mid) >= shared) hi = mid; else lo = mid + 1;
  }
  // Fill everyone to lo − 1, then hand the rest out one each to trainers at
  // that level, starting from a trainer that rotates with the batch.
  uint64_t given = 0;
  for (uint32_t w = 0; w < trainers_; ++w) {
    quota_[w] = lo > 0 && lo - 1 > load_[w] ? static_cast<uint32_t>(lo - 1 - load_[w]) : 0;
    given += quota_[w];
  }
  for (uint32_t k = 0; given < shared; ++k) {
    const uint32_t w = static_cast<uint32_t>((b + k) % trainers_);
    if (uint64_t{load_[w]} + quota_[w] < lo) {
      ++quota_[w];
      ++given;
    }
  }
}

void LookaheadCore::BuildFeatures(const Record& record, BatchRows* rows, BatchPlan* plan) const {
  for (uint32_t w = 0; w < trainers_; ++w) {
    std::vector<TableFeatures>& features = plan->trainers[w].features;
    features.resize(owned_tables_.size());
    for (size_t k = 0; k < owned_tables_.size(); ++k) {
      const uint32_t t = owned_tables_[k];
      SliceTable& slice = rows->slice(w, t);
      TableFeatures& f = features[k];
      f.table = t;
      f.unique_slots.resize(slice.rows.size());
      const uint32_t* entry_of = record.entry_of.data() + record.slice_begin[size_t{w} * tables_ + t];
      GatherSlots(vectorized_, slots_.data(), entry_of, slice.rows.size(), f.unique_slots.data());
      // Swapped, not copied: the BatchRows is spent, and gets capacity back.
      f.inverse.swap(slice.inverse);
      f.offsets.swap(slice.offsets);
    }
    TakeGroups(rows, w, &plan->trainers[w].bag_groups);
  }
}

std::optional<int64_t> LookaheadCore::CachedUntil(uint32_t table, data::RowId row) const {
  if (!std::binary_search(owned_tables_.begin(), owned_tables_.end(), table)) return std::nullopt;
  const RowState& st = state_[table_base_[table] + row];
  // The row holds a slot now exactly when its first unplanned use is a hit:
  // its previous use, planned, then saw that use and kept the slot. With no
  // unplanned use, its last use evicted it. A scan of the window: for tests.
  for (uint64_t b = planned_; b < pushed_; ++b) {
    const Record& record = records_[b % records_.size()];
    for (uint32_t k = record.table_begin[table]; k < record.table_end[table]; ++k) {
      if (record.rows[k] == row) {
        return (record.flags[k] & kCached) ? std::optional<int64_t>(int64_t{st.last_use} - 1) : std::nullopt;
      }
    }
  }
  return std::nullopt;
}

}  // namespace actorrec::oracle
