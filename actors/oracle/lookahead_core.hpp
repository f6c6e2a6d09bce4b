// LookaheadCore: the oracle's planning algorithm (ARCHITECTURE §3) for one
// fixed lookahead L. Planner wraps it with the auto-L probe and buffering.
//
// Model. Batches are pushed in order and planned in order; batch b is
// planned when b … b+L have been pushed (or the data has ended). For every
// row of b:
//  - cached: used by a batch in [b−L, b). It keeps its slot. Otherwise it is
//    a miss and gets a slot now.
//  - private: one trainer's slice touches it in b and no batch in b+1 … b+L
//    uses it. A private miss is fetched by that trainer alone; a private row
//    that is cached (it was shared before) is in every cache but only its
//    user updates it, so it needs no sync either. All other rows are shared.
//  - shared rows updated in b: critical when b+1 uses the row, else delayed.
//  - evicted after b: no batch in b+1 … b+L uses it. Write-back by the owner
//    for private rows; shared evictions are spread so that every trainer
//    writes back about as many rows of b (private ones included).
//
// Slots. Shared rows have the same slot in every trainer's cache (logical
// replication: trainers copy each other's state, and sync sets name one slot
// per row). Private misses of b are packed: the i-th private miss of every
// trainer shares the i-th slot of a group of max_w(private misses of w)
// slots, which the other caches leave empty; so private rows cost about
// what per-trainer slot spaces would, with one slot index per row.
// A slot freed after batch e is handed out again only to batches ≥ e+L+1
// (SlotPool's quarantine): their prefetch waits for the write-backs of
// batches ≤ e (the barrier), so nothing lands before e's write-back has read
// the slot. Occupancy counts every slot taken and not yet out of
// quarantine, the same for every trainer: it bounds each cache's real use.
// At steady state it is about the rows of L+1 batches plus the evictions of
// L batches: quarantine roughly doubles what the live rows alone need.
//
// Partitions. Each cache partition has its own slot range, free slots,
// quarantine and write-back balance, and its plan depends only on its
// tables' rows. So oracles owning disjoint partitions produce, concatenated
// in partition order, exactly a single oracle's plans (MergePlans), and the
// per-row state holds only the owned tables.
//
// Invariants, with `last_use` the last pushed batch that uses a row:
//  (1) when b is planned only batches ≤ b+L are pushed, so a row of b is
//      evicted after b exactly when its last_use is b;
//  (2) a row has a slot exactly from its miss to its eviction; a row pushed
//      in j whose previous use p is within L (j − p ≤ L) is cached at j,
//      because p, still unplanned when j is pushed, sees j in its window;
//  (3) per-row state is direct-indexed by row id; the hot path allocates
//      nothing per row (vectors are reused, their capacity kept).
//  (4) each row of a batch costs one access to the per-row state, on push.
//      What the plan pass needs of a row's history travels in links: the
//      push of j appends to the record of the row's previous use p (when
//      j − p ≤ L) a link to j's entry; planning p marks the linked entries
//      as used again (critical when j = p + 1) and hands each its slot,
//      which planning j reads. Lists are appended and read in order, so
//      they stream, where the per-row state, hundreds of MB, misses.
//
// Ending the window early (a flush; cores made with may_flush). When batch
// b does not fit, or planning it with L would leave b+1 no way to fit even
// as a flush, b is planned as the last batch of the core's run: lookahead
// 0, barrier b − 1, every cached row evicted after it (the rows b does not
// use too), so the next batch starts from empty caches and may be planned
// by a new core (first_batch b + 1) with another L.
// Why it is safe: a row fetched after b was written back after b or
// earlier, and every later barrier is >= b; the barrier b − 1 of b itself
// covers every slot b reuses, so the flush frees the whole quarantine. Why
// it always fits when the previous batch was planned here: b's slots are
// the rows held while b − 1 ran plus b's misses (shared ones one slot each,
// private ones packed), which planning b − 1 checked against the capacity.
// And it is rare: the check fails only when planning b+1 with L would fail
// too, since that needs those same slots plus its quarantine. At a core's
// first batch nothing is held: a flush there needs the batch's own rows
// (a batch that does not fit even so fails, naming what it needs).
// With several partitions the flush is the whole batch's: each partition
// checks its own slots, and when one cannot go on every partition ends its
// window at b (the batch is planned again from the first partition). A plan
// carries one lookahead and one barrier for all its rows, and the core has
// one window of records and one L, chosen again for all partitions after
// the flush; a partition that kept its window would need its own L and its
// own barriers. Oracles split by table agree the same way, by asking each
// core MustEndWindow() and planning b with end_window if any says so.
//
// Thread-safety: none; one thread owns a core.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/oracle/slot_pool.hpp"
#include "plan/trainer_plan.hpp"
#include "actors/oracle/zeroed_array.hpp"
#include "base/status.hpp"

namespace actorrec::oracle {

struct PassCounts;  // lookahead_core.cpp

class LookaheadCore {
 public:
  // Plans the partitions `owned` of `options`. `bounded` false: slots never
  // run out and only the peak occupancy matters (the auto-L probe).
  // `may_flush`: a batch that does not fit ends the window instead of
  // failing (above); only for a bounded core.
  // REQUIRES: Validate(options).ok(), lookahead >= 1.
  LookaheadCore(const PlannerOptions& options, std::vector<uint32_t> owned, uint32_t lookahead, bool bounded,
                bool may_flush = false);

  LookaheadCore(const LookaheadCore&) = delete;
  LookaheadCore& operator=(const LookaheadCore&) = delete;

  uint32_t lookahead() const { return lookahead_; }
  // Batches pushed and planned so far. Internally batches count from 0 (the
  // per-row state, the writer rotation); only the plans' batch and barrier
  // fields add PlannerOptions::first_batch.
  uint64_t pushed() const { return pushed_; }
  uint64_t planned() const { return planned_; }
  bool WindowFull() const { return pushed_ - planned_ == uint64_t{lookahead_} + 1; }
  // The last PlanNext ended the window (a flush): the core plans no more.
  bool flushed() const { return flushed_; }

  // Adds the next batch to the window.
  // REQUIRES: !WindowFull(); rows has the options' shape, rows below the
  // tables' cardinalities and distinct within each slice.
  void Push(const BatchRows& rows);

  // Plans batch planned(). With `end_window` (REQUIRES may_flush), as a
  // flush whatever its own partitions need. With `plan`, fills it (lists of the owned
  // partitions in partition order, features of the owned tables in table
  // order, reusing the plan's capacity) and swaps the inverse and offsets
  // out of `rows`, the BatchRows pushed for that batch. Without, only
  // accounts slots. InvalidArgument naming the needed capacity when a
  // partition runs out of slots; the core is unusable after an error.
  // REQUIRES: planned() < pushed(), and WindowFull() unless no batch follows.
  Status PlanNext(BatchRows* rows, BatchPlan* plan, bool end_window = false);

  // Whether PlanNext(…, end_window = false) would end the window at batch
  // planned(): false without may_flush. Changes nothing PlanNext sees (it
  // marks the record and opens the batch's quarantine release, as PlanNext
  // does first). For oracles split by table: each asks its core, and all
  // plan the batch with end_window when any must (a batch-wide flush).
  // REQUIRES: planned() < pushed(), and WindowFull() unless no batch follows.
  bool MustEndWindow();

  // The most slots partition owned[i] has held at once, and the slots it
  // holds during the last planned batch (quarantine included).
  uint32_t peak(size_t i) const { return pools_[i].peak(); }
  uint32_t in_use(size_t i) const { return pools_[i].in_use(); }

  // Whether the plan passes run the AVX-512 loops (PlannerOptions::kernel).
  bool vectorized() const { return vectorized_; }

  // The batch after which the cached row is evicted as far as the window
  // shows now (its TTL), or nullopt when it is not cached. Scans the
  // window's records: for tests and debugging.
  std::optional<int64_t> CachedUntil(uint32_t table, data::RowId row) const;

 private:
  // Per-row state, direct-indexed by table_base_[t] + row: what Push needs
  // to find the row's previous use. Only Push reads it: the plan pass learns
  // whether a row is used again and its slot from links (below), so each
  // distinct row of a batch costs one access to this array, which is
  // hundreds of MB and read at random. 8 bytes: no entry straddles a line.
  struct RowState {
    uint32_t last_use;  // last pushed batch that uses the row, + 1; 0: never
    uint32_t last_pos;  // the row's entry in that batch's record
  };

  // A later use of one of a record's rows within L batches: the push of
  // that later batch appends it to the record of the row's previous use.
  // Which batch it came from is told by the record's link runs (below).
  struct Link {
    uint32_t from;     // the entry in this record
    uint32_t to_pos;   // the row's entry in the later batch's record
  };
  // A slot handed on to a record's entry by the plan of the row's previous
  // use (the row stays cached, so it keeps the slot).
  struct Handover {
    uint32_t pos;
    uint32_t slot;
  };

  // A list with room for a bound known before the first append (Reset), so
  // that an append is a store and an increment, with no capacity check and
  // no branch.
  template <class T>
  struct BoundedList {
    std::unique_ptr<T[]> items;
    size_t capacity = 0;
    T* end = nullptr;
    // Empties the list, with room for `most` items. The buffer is kept when
    // it is large enough, and a new one has a quarter more room: bounds vary
    // from batch to batch, and each new buffer costs page faults.
    void Reset(size_t most) {
      if (capacity < most) {
        capacity = most + most / 4;
        items = std::make_unique_for_overwrite<T[]>(capacity);
      }
      end = items.get();
    }
    const T* begin() const { return items.get(); }
  };

  // A pushed, unplanned batch. Its entries are the distinct rows of the
  // batch, per table in order of first use over the trainers' slices, held
  // as parallel arrays (valid: those in the tables' ranges): the plan passes
  // read them 16 at a time, and the random writes of push and of the link
  // marks land in the one-byte flags. Their slots, known only once the
  // batch is planned, live in the core's slots_.
  struct Record {
    std::vector<data::RowId> rows;                 // per entry: its row
    std::vector<uint16_t> owners;                  // first trainer to touch it: the only one when private
    std::vector<uint8_t> flags;                    // per entry: two from push, two when planned (.cpp)
    std::vector<uint32_t> table_begin, table_end;  // per table: its entries
    std::vector<uint32_t> entry_of;                // per slice row: its entry
    std::vector<uint32_t> slice_begin;             // per (w, t): start in entry_of
    // Appended in order while later batches are pushed and earlier ones are
    // planned; the plan of this batch reads them while its record is in
    // cache, where writing each into its entry at once would miss. Room for
    // one of each per entry (a row has one next use and one previous use),
    // set when the record is pushed.
    BoundedList<Link> links;          // the record's rows used again within L
    BoundedList<Handover> handovers;  // the slots of its cached rows
    // Links come in push order: link_runs[a − 1] is where those of batch
    // (this one + a) start, a = 1 … L, set as that batch is pushed.
    std::vector<uint32_t> link_runs;
  };

  Record& RecordOf(uint64_t b) { return records_[b % records_.size()]; }

  // The first part of planning b: the record's link marks (which rows are
  // used again) and handovers (the slots of its cached rows). Idempotent.
  void MarkRecord(uint64_t b);
  // The number of later batches b's record has links from, and the links
  // that came from batch b + a (1 <= a <= later).
  uint32_t Later(uint64_t b) const;
  std::pair<const Link*, const Link*> LinkRun(const Record& record, uint32_t a, uint32_t later) const;
  // Plans every owned partition of b, from the first. Sets *ends (and stops)
  // when, not yet flushed_, a partition cannot go on with L.
  Status PlanPartitions(uint64_t b, Record& record, BatchPlan* plan, bool* ends);
  // Plans partition owned_[i] of batch b, appending its lists to *plan
  // when there is one; adds its occupancy to occupancy_ and
  // trainer_occupancy_. As a flush when flushed_; else, with may_flush_,
  // sets *ends instead when b or b+1 would not fit otherwise.
  Status PlanPartition(size_t i, uint64_t b, Record& record, BatchPlan* plan, bool* ends);
  // Pass 1 over partition owned_[i] of `record`: counts into *counts, the
  // slots to retire into retired_[0 … *retired), load_ and private_misses_;
  // take(k) for each shared miss. Returns the private group's size.
  template <class Take>
  uint32_t ClassifyPartition(size_t i, const Record& record, PassCounts* counts, uint32_t* retired, Take&& take);
  // Whether partition owned_[i] cannot go on with L at b: `takes` more slots
  // than it has free, or, with them taken, no room for b+1 as a flush.
  // `in_use` and `quarantined`: the pool's before the takes.
  bool EndsWindow(size_t i, uint64_t b, uint32_t in_use, uint32_t quarantined, uint32_t takes);
  // Whether batch b+1, planned as a flush, fits partition owned_[i] when
  // `held` slots hold rows while b runs.
  bool NextFlushFits(size_t i, uint64_t b, uint32_t held);
  // The flush of b: the rows cached while b runs that b does not use (each
  // handed over to a later record) into inherited_, and every slot that
  // holds a row into held_.
  void CollectHeld(size_t i, uint64_t b, const Record& record);
  // PlanPartition's second pass: the lists, from the flags and the counts
  // of the first (and the inherited rows a flush evicts).
  void EmitLists(size_t i, uint64_t b, Record& record, const PassCounts& counts, BatchPlan* plan);
  // Shares out `shared` write-backs over the trainers on top of load_.
  void SetWriterQuotas(uint64_t b, uint32_t shared);
  void BuildFeatures(const Record& record, BatchRows* rows, BatchPlan* plan) const;

  const uint32_t trainers_;
  const bool vectorized_;  // the plan passes run the AVX-512 loops (PlannerOptions::kernel)
  const bool all_shared_;  // PlannerOptions::private_rows == false: every row is shared
  const bool all_critical_;  // PlannerOptions::delayed_sync == false: every shared row is critical
  const uint32_t tables_;
  const uint32_t lookahead_;
  const int64_t first_batch_;
  std::vector<uint32_t> owned_;                     // partition indices
  std::vector<std::vector<uint32_t>> part_tables_;  // per owned partition, ascending
  std::vector<uint32_t> owned_tables_;              // ascending
  std::vector<uint64_t> table_base_;                // per table, then the total; only owned tables count
  ZeroedArray<RowState> state_;                     // untouched rows cost no memory
  std::vector<Record> records_;                     // L + 1, by batch mod L + 1
  std::vector<SlotPool> pools_;                     // per owned partition
  const bool may_flush_;
  bool flushed_ = false;
  uint64_t pushed_ = 0;
  uint64_t planned_ = 0;
  // Per owned partition, the group slots a trainer leaves empty (its
  // private misses fewer than the group's): per batch of the quarantine
  // window, [(b mod (L + 1)) · W + w], and their sum per trainer. A
  // trainer's own occupancy is the partition's minus that sum.
  std::vector<std::vector<uint32_t>> unused_, unused_sum_;

  // Scratch of PlanNext, kept for its capacity.
  std::vector<uint32_t> slots_;           // per entry of the batch being planned: its slot
  std::vector<uint32_t> private_misses_;  // per trainer
  std::vector<uint32_t> load_;            // per trainer: its private rows of the batch
  std::vector<uint32_t> quota_;           // per trainer: shared write-backs still to give
  std::vector<uint32_t> group_;           // slots of the private misses
  std::vector<uint32_t> next_group_;      // per trainer: its private misses given a slot so far
  std::vector<uint32_t> retired_;         // slots freed after the batch
  std::vector<uint32_t> writers_;         // the writers of the shared evictions, in entry order
  std::vector<Link*> link_ends_;          // Push's scratch: per ring index, the end of its links
  std::vector<RowSlot*> own_prefetch_, own_rows_;  // per trainer: write cursors into its lists
  uint32_t occupancy_ = 0;                   // slots of the owned partitions in use during the batch
  std::vector<uint32_t> trainer_occupancy_;  // per trainer: of them, its own
  std::vector<uint32_t> flush_private_;      // NextFlushFits: per trainer, private misses
  std::vector<RowSlot> inherited_;           // a flush: cached rows the batch does not use
  std::vector<uint32_t> held_;               // a flush: slots that hold rows

  // Rows written so far to each list of the plan being built.
  struct Fill {
    uint32_t prefetch = 0, critical = 0, delayed = 0, evictions = 0;
    std::vector<uint32_t> private_prefetch, private_rows;  // per trainer
    void Reset(uint32_t trainers) {
      prefetch = critical = delayed = evictions = 0;
      private_prefetch.assign(trainers, 0);
      private_rows.assign(trainers, 0);
    }
  };
  Fill fill_;
};

}  // namespace actorrec::oracle
