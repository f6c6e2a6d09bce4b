// TrainerPlan: what one trainer does with its cache for one batch, as plain
// C++ values. Field by field the mirror of messages/plan.capnp (read the
// schema for the meaning of each list); messages/plan_codec.hpp converts.
// BatchPlan: the plans of one batch for all trainers, as the oracle makes
// them, with what the trainers share stored once.
//
// In plan/, below messages/, and header-only on purpose: the codec in
// messages/ includes it without depending on the oracle (docs/layout.md).
#pragma once

#include <cstdint>
#include <vector>

#include "data/sample_block.hpp"

namespace actorrec::oracle {

// A row of a table and the slot it occupies in this trainer's cache.
struct RowSlot {
  uint32_t table = 0;
  data::RowId row = 0;
  uint32_t slot = 0;
  bool operator==(const RowSlot&) const = default;
};

struct Eviction {
  uint32_t table = 0;
  data::RowId row = 0;
  uint32_t slot = 0;
  uint32_t writer = 0;  // the one trainer that writes the row back
  bool operator==(const Eviction&) const = default;
};

// One table of the trainer's slice, deduplicated and translated to slots:
// sample i pools cache[unique_slots[inverse[p]]] for p in
// [offsets[i], offsets[i + 1]).
struct TableFeatures {
  uint32_t table = 0;
  std::vector<uint32_t> unique_slots;
  std::vector<uint32_t> inverse;
  data::BagOffsets offsets;  // compact (nothing stored) when every bag holds one id
  bool operator==(const TableFeatures&) const = default;
};

// A dedup group of the trainer's slice (RecD's IKJT, dataset.dedup_groups):
// the TableFeatures of each of its tables describe the slice's distinct bag
// tuples (offsets over U tuples, not over the samples), and sample i uses
// tuple bag_of[i] of every table of the group. The trainer pools each tuple
// once and expands it to its samples.
struct BagGroup {
  std::vector<uint32_t> tables;  // ascending
  std::vector<uint32_t> bag_of;  // one per sample of the slice, each < U
  bool operator==(const BagGroup&) const = default;
};

struct TrainerPlan {
  int64_t batch = 0;
  uint32_t trainer = 0;
  uint32_t lookahead = 0;
  int64_t barrier = -1;
  std::vector<RowSlot> prefetch;          // shared misses: every trainer fetches them
  std::vector<RowSlot> private_prefetch;  // this trainer's private misses
  std::vector<TableFeatures> features;    // one per planned table, ascending
  std::vector<BagGroup> bag_groups;       // the dedup groups; empty without dedup
  std::vector<RowSlot> private_rows;      // updated here only: no sync
  std::vector<RowSlot> critical;          // shared, updated in b, read by b + 1
  std::vector<RowSlot> delayed;           // shared, updated in b, not read by b + 1
  std::vector<Eviction> evictions;        // freed after b
  uint32_t occupancy = 0;                 // slots of this trainer's cache held while b runs (quarantine included)
  bool operator==(const TrainerPlan&) const = default;
};

// Shared lists are the same for every trainer (logical replication), so a
// batch keeps one copy: with L = 200 on Criteo-like data most rows of a batch
// are shared, and W copies of them would cost more than planning them.
struct BatchPlan {
  struct Own {
    std::vector<RowSlot> private_prefetch;  // also freed after b, with this trainer as writer
    std::vector<RowSlot> private_rows;
    std::vector<TableFeatures> features;
    std::vector<BagGroup> bag_groups;
    // Slots of this trainer's cache held while b runs, quarantine included:
    // `occupancy` less the private slots of the other trainers it leaves empty.
    uint32_t occupancy = 0;
    bool operator==(const Own&) const = default;
  };

  int64_t batch = 0;
  uint32_t lookahead = 0;
  int64_t barrier = -1;
  // Slots in use in the index space every cache shares (the union over
  // trainers): what must fit training.cache_rows; each trainer's own is in
  // trainers[w].occupancy.
  uint32_t occupancy = 0;
  std::vector<RowSlot> prefetch;
  std::vector<RowSlot> critical;
  std::vector<RowSlot> delayed;
  std::vector<Eviction> evictions;  // what every cache frees: shared rows and cached private rows
  std::vector<Own> trainers;        // index w
  bool operator==(const BatchPlan&) const = default;

  // Trainer w's plan. Its evictions are `evictions`, then w's private
  // prefetches with w as writer.
  TrainerPlan ForTrainer(uint32_t w) const {
    TrainerPlan p;
    p.batch = batch;
    p.trainer = w;
    p.lookahead = lookahead;
    p.barrier = barrier;
    p.prefetch = prefetch;
    p.private_prefetch = trainers[w].private_prefetch;
    p.features = trainers[w].features;
    p.bag_groups = trainers[w].bag_groups;
    p.private_rows = trainers[w].private_rows;
    p.critical = critical;
    p.delayed = delayed;
    p.evictions.reserve(evictions.size() + p.private_prefetch.size());
    p.evictions = evictions;
    for (const RowSlot& r : p.private_prefetch) p.evictions.push_back({r.table, r.row, r.slot, w});
    p.occupancy = trainers[w].occupancy;
    return p;
  }
};

}  // namespace actorrec::oracle
