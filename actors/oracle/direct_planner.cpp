#include "actors/oracle/direct_planner.hpp"

#include <algorithm>
#include <numeric>

#include "actors/oracle/planner.hpp"

namespace actorrec::oracle {
namespace {

uint64_t Key(uint32_t t, data::RowId r) { return uint64_t{t} << 32 | r; }

uint64_t ResidentCount(const DirectOptions& o) {
  switch (o.resident) {
    case DirectOptions::Resident::kAll: return TotalRows(o.table_rows);
    case DirectOptions::Resident::kListed: return o.listed.size();
    case DirectOptions::Resident::kNone: return 0;
  }
  return 0;
}

}  // namespace

uint64_t TotalRows(const std::vector<uint64_t>& table_rows) {
  return std::accumulate(table_rows.begin(), table_rows.end(), uint64_t{0});
}

uint64_t DirectOptions::slots() const { return ResidentCount(*this) + staging; }

Status Validate(const DirectOptions& o) {
  if (o.trainers == 0 || o.trainers > 65535) return Status::InvalidArgument("trainers must be 1 … 65535");
  if (o.slots() >= (uint64_t{1} << 32)) {
    return Status::InvalidArgument(std::to_string(o.slots()) + " slots per trainer are more than 2^32");
  }
  std::vector<uint64_t> keys = o.listed;
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
    return Status::InvalidArgument("a resident row is listed twice");
  }
  for (uint64_t k : keys) {
    const uint64_t t = k >> 32, r = k & 0xffffffffu;
    if (t >= o.table_rows.size() || r >= o.table_rows[t]) {
      return Status::InvalidArgument("resident row " + std::to_string(r) + " of table " + std::to_string(t) +
                                     " is out of range");
    }
  }
  return Status::Ok();
}

DirectPlanner::DirectPlanner(DirectOptions options) : options_(std::move(options)) {
  resident_slots_ = static_cast<uint32_t>(ResidentCount(options_));
  if (options_.resident == DirectOptions::Resident::kAll) {
    uint64_t base = 0;
    for (uint64_t rows : options_.table_rows) {
      table_base_.push_back(base);
      base += rows;
    }
  } else if (options_.resident == DirectOptions::Resident::kListed) {
    for (uint32_t s = 0; s < options_.listed.size(); ++s) listed_.emplace(options_.listed[s], s);
  }
  fetched_.assign(resident_slots_, false);
  synced_.assign(resident_slots_, false);
}

RowSlot DirectPlanner::ResidentRow(uint32_t s) const {
  if (options_.resident == DirectOptions::Resident::kAll) {
    const auto t = static_cast<uint32_t>(std::upper_bound(table_base_.begin(), table_base_.end(), s) -
                                         table_base_.begin() - 1);
    return {t, static_cast<data::RowId>(s - table_base_[t]), s};
  }
  return {static_cast<uint32_t>(options_.listed[s] >> 32), static_cast<data::RowId>(options_.listed[s] & 0xffffffffu),
          s};
}

int64_t DirectPlanner::ResidentSlot(uint32_t t, data::RowId r) const {
  switch (options_.resident) {
    case DirectOptions::Resident::kAll: return static_cast<int64_t>(table_base_[t] + r);
    case DirectOptions::Resident::kListed: {
      auto it = listed_.find(Key(t, r));
      return it == listed_.end() ? -1 : static_cast<int64_t>(it->second);
    }
    case DirectOptions::Resident::kNone: return -1;
  }
  return -1;
}

Status DirectPlanner::Push(BatchRows rows) {
  if (rows.trainers != options_.trainers || rows.tables != options_.table_rows.size()) {
    return Status::InvalidArgument("a batch of " + std::to_string(rows.trainers) + " slices and " +
                                   std::to_string(rows.tables) + " tables for a planner of " +
                                   std::to_string(options_.trainers) + " trainers and " +
                                   std::to_string(options_.table_rows.size()) + " tables");
  }
  for (uint32_t w = 0; w < rows.trainers; ++w) {
    for (uint32_t t = 0; t < rows.tables; ++t) {
      for (data::RowId r : rows.slice(w, t).rows) {
        if (r >= options_.table_rows[t]) {
          return Status::InvalidArgument("row " + std::to_string(r) + " of table " + std::to_string(t) +
                                         " is beyond its " + std::to_string(options_.table_rows[t]) + " rows");
        }
      }
    }
  }
  pending_.push_back(std::move(rows));
  return Status::Ok();
}

Status DirectPlanner::Finish() {
  finished_ = true;
  return Status::Ok();
}

Status DirectPlanner::PlanNext(BatchPlan* plan) {
  BatchRows& rows = pending_.front();
  const uint32_t W = options_.trainers, T = rows.tables;
  const int64_t b = static_cast<int64_t>(next_batch());
  const bool last = finished_ && pending_.size() == 1;
  plan->batch = b;
  const auto first = static_cast<int64_t>(options_.first_batch);
  const bool ideal = options_.resident == DirectOptions::Resident::kAll;
  plan->lookahead = ideal ? static_cast<uint32_t>(b - first) : 0;
  plan->barrier = ideal ? first - 1 : b - 1;
  plan->prefetch.clear();
  plan->critical.clear();
  plan->delayed.clear();
  plan->evictions.clear();
  plan->trainers.resize(W);
  for (BatchPlan::Own& own : plan->trainers) {
    own.private_prefetch.clear();
    own.private_rows.clear();
  }

  // Every distinct row of the batch, in slice order: a resident one joins
  // the critical list (and the prefetch at its first use), another is staged.
  staged_index_.clear();
  staged_.clear();
  for (uint32_t w = 0; w < W; ++w) {
    for (uint32_t t = 0; t < T; ++t) {
      for (data::RowId r : rows.slice(w, t).rows) {
        const int64_t resident = ResidentSlot(t, r);
        if (resident >= 0) {
          const uint32_t s = static_cast<uint32_t>(resident);
          if (synced_[s]) continue;
          synced_[s] = true;
          synced_slots_.push_back(s);
          plan->critical.push_back({t, r, s});
          if (!fetched_[s]) {
            fetched_[s] = true;
            ++held_;
            plan->prefetch.push_back({t, r, s});
          }
          continue;
        }
        auto [it, fresh] = staged_index_.emplace(Key(t, r), static_cast<uint32_t>(staged_.size()));
        if (fresh) {
          staged_.push_back({t, r, w, false, 0});
        } else if (staged_[it->second].owner != w) {
          staged_[it->second].shared = true;
        }
      }
    }
  }
  for (uint32_t s : synced_slots_) synced_[s] = false;
  synced_slots_.clear();

  // Staging slots: shared rows first, then the private ones, the i-th of
  // every trainer in the same slot.
  uint32_t shared = 0;
  std::vector<uint32_t> privates(W, 0);
  for (const Staged& s : staged_) {
    if (s.shared) {
      ++shared;
    } else {
      ++privates[s.owner];
    }
  }
  const uint32_t needed = shared + *std::max_element(privates.begin(), privates.end());
  if (needed > options_.staging) {
    return Status::InvalidArgument("batch " + std::to_string(b) + " touches " + std::to_string(needed) +
                                   " rows per trainer that are not resident, but only " +
                                   std::to_string(options_.staging) +
                                   " slots stage them: raise training.cache_rows");
  }
  std::fill(privates.begin(), privates.end(), 0);
  uint32_t next_shared = 0;
  uint32_t writer = static_cast<uint32_t>(b % W);
  for (Staged& s : staged_) {
    if (s.shared) {
      s.slot = resident_slots_ + next_shared++;
      plan->prefetch.push_back({s.table, s.row, s.slot});
      plan->critical.push_back({s.table, s.row, s.slot});
      plan->evictions.push_back({s.table, s.row, s.slot, writer});
      writer = writer + 1 == W ? 0 : writer + 1;
    } else {
      s.slot = resident_slots_ + shared + privates[s.owner]++;
      plan->trainers[s.owner].private_prefetch.push_back({s.table, s.row, s.slot});
      plan->trainers[s.owner].private_rows.push_back({s.table, s.row, s.slot});
    }
  }

  // Features as slots; the BatchRows is spent, so its vectors move.
  for (uint32_t w = 0; w < W; ++w) {
    std::vector<TableFeatures>& features = plan->trainers[w].features;
    features.resize(T);
    for (uint32_t t = 0; t < T; ++t) {
      SliceTable& slice = rows.slice(w, t);
      TableFeatures& f = features[t];
      f.table = t;
      f.unique_slots.resize(slice.rows.size());
      for (size_t u = 0; u < slice.rows.size(); ++u) {
        const int64_t resident = ResidentSlot(t, slice.rows[u]);
        f.unique_slots[u] = resident >= 0 ? static_cast<uint32_t>(resident)
                                          : staged_[staged_index_.at(Key(t, slice.rows[u]))].slot;
      }
      f.inverse.swap(slice.inverse);
      f.offsets.swap(slice.offsets);
    }
    TakeGroups(&rows, w, &plan->trainers[w].bag_groups);
  }

  plan->occupancy = held_ + needed;
  for (uint32_t w = 0; w < W; ++w) plan->trainers[w].occupancy = held_ + shared + privates[w];
  // After the last batch every resident row goes back to its shard.
  if (last) {
    for (uint32_t s = 0; s < resident_slots_; ++s) {
      if (!fetched_[s]) continue;
      fetched_[s] = false;
      --held_;
      const RowSlot row = ResidentRow(s);
      plan->evictions.push_back({row.table, row.row, s, writer});
      writer = writer + 1 == W ? 0 : writer + 1;
    }
  }
  spare_ = std::move(pending_.front());
  pending_.pop_front();
  ++planned_;
  return Status::Ok();
}

std::unique_ptr<PlanMaker> MakePlanMaker(const PlannerOptions& options, const DirectOptions* direct) {
  if (direct) return std::make_unique<DirectPlanner>(*direct);
  return std::make_unique<Planner>(options);
}

}  // namespace actorrec::oracle
