// DirectPlanner: the plans of the modes without lookahead (ARCHITECTURE §8),
// in the lookahead planner's format, so that the actor pipeline (and a
// cluster) runs the baselines a user compares against:
//   ideal       every row resident in every trainer for the whole run (it
//               alone ignores training.cache_rows: it holds every row);
//   static_hot  a fixed set of hot rows resident, every other row fetched
//               for the batch that uses it; hot rows + staging =
//               training.cache_rows (trainer/run_parts.hpp's HotRows);
//   no_cache    nothing resident, every row fetched for its batch.
//
// Plan of batch b:
//  - resident rows: fetched by every trainer for their first use (until then
//    no batch has updated them, so the shard's value is current whenever the
//    fetch is served; fetching every row up front would also create rows on
//    the shards that training never touches); every update of one is synced
//    before b+1 (critical), whichever trainers touched it; all are evicted
//    after the last batch;
//  - other rows are staged for b alone: a row one trainer uses is private
//    (only it fetches, updates and writes it back), one several use is
//    shared (every trainer fetches it, its update is synced before b+1, one
//    trainer writes it back, turn by turn);
//  - static_hot, no_cache: lookahead 0, barrier b − 1: the fetch of b waits
//    for b−1's write-backs, which keeps every read current without a window
//    (and puts their fetches on the critical path);
//  - ideal: nothing is written back before the end, so no fetch waits: the
//    window is the whole run (lookahead b − first_batch, barrier
//    first_batch − 1) and a row's first fetch overlaps earlier batches;
//  - nothing is delayed.
// Slots: the resident rows first ([0, resident): ideal by (table, row),
// static_hot in the order of `listed`), then `staging` slots for one batch's
// other rows, reused by the next batch (its barrier covers their
// write-backs); the i-th private row of every trainer shares staging slot i.
//
// A batch is planned once the next one is pushed (or the data has ended), so
// the last batch's plan can evict the resident rows.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/oracle/plan_maker.hpp"

namespace actorrec::oracle {

struct DirectOptions {
  enum class Resident { kNone, kAll, kListed };
  uint32_t trainers = 1;
  std::vector<uint64_t> table_rows;
  Resident resident = Resident::kNone;
  std::vector<uint64_t> listed;  // kListed: (table << 32 | row), distinct
  uint32_t staging = 0;          // slots per trainer for one batch's other rows
  uint64_t first_batch = 0;
  // The words for lookahead_report(), e.g. "static_hot: 65536 hot rows from the first 16 batches".
  std::string report;

  // Slots of every trainer's cache: the resident rows and the staging.
  uint64_t slots() const;
};

// Rows of all tables together (ideal's resident rows).
uint64_t TotalRows(const std::vector<uint64_t>& table_rows);

// InvalidArgument naming the problem: no trainers, a listed row out of
// range or twice, more than 2^32 slots.
Status Validate(const DirectOptions& options);

class DirectPlanner final : public PlanMaker {
 public:
  // REQUIRES: Validate(options).ok().
  explicit DirectPlanner(DirectOptions options);

  bool CanPush() const override { return !finished_ && pending_.size() < 2; }
  Status Push(BatchRows rows) override;
  Status Finish() override;
  bool Ready() const override { return pending_.size() >= 2 || (finished_ && !pending_.empty()); }
  // InvalidArgument naming training.cache_rows when the batch's other rows
  // do not fit the staging slots.
  Status PlanNext(BatchPlan* plan) override;
  bool Done() const override { return finished_ && pending_.empty(); }
  uint64_t next_batch() const override { return options_.first_batch + planned_; }
  uint32_t lookahead() const override { return 0; }
  const std::string& lookahead_report() const override { return options_.report; }
  BatchRows RecycledRows() override { return std::move(spare_); }

 private:
  // The resident slot of (t, r), or -1 when the row is not resident.
  int64_t ResidentSlot(uint32_t t, data::RowId r) const;
  // The row in resident slot s.
  RowSlot ResidentRow(uint32_t s) const;

  DirectOptions options_;
  std::vector<uint64_t> table_base_;                 // kAll: slot of (t, 0)
  std::unordered_map<uint64_t, uint32_t> listed_;    // kListed: key -> slot
  uint32_t resident_slots_ = 0;
  std::vector<bool> fetched_;                        // per resident slot: in every cache now
  uint32_t held_ = 0;                                // of them, true
  std::deque<BatchRows> pending_;
  BatchRows spare_;
  bool finished_ = false;
  uint64_t planned_ = 0;

  // Scratch of one batch: the staged rows, by key.
  struct Staged {
    uint32_t table = 0;
    data::RowId row = 0;
    uint32_t owner = 0;   // the first trainer that uses it
    bool shared = false;  // a second trainer uses it too
    uint32_t slot = 0;
  };
  std::unordered_map<uint64_t, uint32_t> staged_index_;
  std::vector<Staged> staged_;
  std::vector<bool> synced_;  // per resident slot: in this batch's critical list already
  std::vector<uint32_t> synced_slots_;
};

}  // namespace actorrec::oracle
