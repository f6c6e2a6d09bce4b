// How an oracle is configured: trainers, tables, cache partitions, lookahead.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/oracle/kernel.hpp"
#include "base/status.hpp"

namespace actorrec::oracle {

// A cache partition: a slot range of every trainer's cache and the tables
// whose rows live in it. Partition p's slots are [first_slot(p),
// first_slot(p) + capacity), laid out in partition order from slot 0; each
// partition has its own free slots and quarantine, so planning one never
// looks at another's tables (which is what lets oracles split by table).
struct Partition {
  std::vector<uint32_t> tables;
  uint32_t capacity = 0;  // slots per trainer
};

struct PlannerOptions {
  uint32_t trainers = 1;              // W: slices per global batch
  std::vector<uint64_t> table_rows;   // cardinality per table; per-row state is direct-indexed by these
  std::vector<Partition> partitions;  // every table in exactly one
  // L: batches b+1 … b+L are in view when b is planned. 0 picks the largest
  // L ≤ max_lookahead whose peak occupancy fits every partition on a probe
  // of the first probe_batches batches (Planner::lookahead_report).
  uint32_t lookahead = 0;
  // Auto-L: the probe buffers probe_batches batches and replans them once per
  // candidate L (a binary search, about log2(max_lookahead) runs), so both
  // bound the memory and the start-up time it costs.
  uint32_t max_lookahead = 64;
  // 0: 2·max_lookahead + 2, enough for a row's slot to go through a whole
  // lifetime and quarantine at the largest candidate L.
  uint32_t probe_batches = 0;
  // Partitions this instance plans (ascending); empty: all. Instances split
  // by table share every other option, so they agree on slots and on auto-L.
  std::vector<uint32_t> owned;
  // False is the `replicated` mode (ARCHITECTURE §8): no row is private,
  // every miss is a shared prefetch and every updated row is synced.
  bool private_rows = true;
  // False is `lrpp` and `replicated` (ARCHITECTURE §8): every shared row
  // updated in b is synced before b+1 starts (critical), none in the
  // background. True splits them into critical (b+1 reads the row) and
  // delayed (read later, or evicted after b).
  bool delayed_sync = true;
  // The batch number of the first pushed batch: a run resumed at batch k
  // from a checkpoint (every cache empty, every row written back) plans k,
  // k+1, … with first_batch = k. Plans are numbered from it and their
  // barriers never name a batch before first_batch − 1 (whose write-backs
  // the checkpoint holds); otherwise they are exactly a fresh planner's
  // plans of the same batches, renumbered.
  uint64_t first_batch = 0;
  // The plan passes' code (LookaheadCore); every kernel makes the same plans.
  Kernel kernel = Kernel::kBest;
};

// All tables in one partition of `capacity` slots.
std::vector<Partition> OnePartition(size_t num_tables, uint32_t capacity);

// First slot of partition p: the capacities of partitions 0 … p−1.
uint32_t FirstSlot(const PlannerOptions& options, uint32_t p);

// InvalidArgument naming the first problem: no trainers or more than 65535,
// a table in no partition or in two, an empty partition capacity, slots
// beyond 2^32, an owned partition out of range or out of order.
Status Validate(const PlannerOptions& options);

// The owned partitions, all of them when `owned` is empty.
std::vector<uint32_t> OwnedPartitions(const PlannerOptions& options);

}  // namespace actorrec::oracle
