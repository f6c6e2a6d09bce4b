// The plan executor: caches, store, syncs and write-backs, with checks.
#include "tests/actors/oracle/executor.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>

namespace actorrec::oracle::testing {
namespace {

using Key = uint64_t;
Key KeyOf(uint32_t table, uint32_t row) { return (uint64_t{table} << 32) | row; }
std::string Name(Key k) {
  // Appends only: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "(" + std::to_string(…).
  std::string s = "(";
  return s.append(std::to_string(k >> 32)).append(", ").append(std::to_string(k & 0xffffffffu)).append(")");
}

enum class State { kFree, kLive, kRetiring };

struct Slot {
  State state = State::kFree;
  Key key = 0;
  uint32_t version = 0;
  int64_t landed = -1;        // batch whose prefetch brought the row
  bool sync_pending = false;  // a shared update not yet applied to this copy
  bool writer = false;        // this cache writes the row back (while retiring)
};

class Executor {
 public:
  Executor(const ExecutorOptions& o, const std::vector<data::SampleBlock>& batches,
           const std::vector<std::vector<TrainerPlan>>& plans)
      : o_(o), batches_(batches), plans_(plans), caches_(o.trainers, std::vector<Slot>(o.capacity)),
        where_(o.trainers), landed_(plans.size(), false) {
    for (const auto& batch : batches) {
      std::unordered_map<Key, uint64_t> users;
      const uint32_t n = static_cast<uint32_t>(batch.size());
      for (uint32_t w = 0; w < o.trainers; ++w) {
        const uint32_t begin = static_cast<uint32_t>(uint64_t{n} * w / o.trainers);
        const uint32_t end = static_cast<uint32_t>(uint64_t{n} * (w + 1) / o.trainers);
        for (uint32_t t = 0; t < batch.tables.size(); ++t) {
          const auto& kjt = batch.tables[t];
          for (uint32_t p = kjt.offsets[begin]; p < kjt.offsets[end]; ++p) users[KeyOf(t, kjt.values[p])] |= 1ull << w;
        }
      }
      for (const auto& kv : users) uses_[kv.first].push_back(static_cast<int64_t>(users_.size()));
      users_.push_back(std::move(users));
    }
  }

  std::vector<std::string> Run() {
    const int64_t n = static_cast<int64_t>(batches_.size());
    if (plans_.size() != batches_.size()) {
      Fail("planned " + std::to_string(plans_.size()) + " batches of " + std::to_string(n));
      return errors_;
    }
    for (int64_t b = 0; b < n && o_.check_sets; ++b) CheckSets(b);
    if (o_.exact_occupancy) CheckOccupancy();
    if (!errors_.empty()) return errors_;
    LandUpTo(-1);
    for (int64_t b = 0; b < n && errors_.empty(); ++b) {
      // Lazy as far as the plans allow: a barrier of b − 1 (a window ended
      // early) needs b − 1's delayed syncs and write-backs before b runs.
      const bool waits_for_previous = o_.lazy && b > 0 && plans_[b][0].barrier >= b - 1;
      if (waits_for_previous) {
        Sync(b - 1, /*critical=*/false);
        WriteBack(b - 1);
        LandUpTo(b - 1);
      }
      RunBatch(b);
      Evict(b);
      if (!o_.lazy) {
        Sync(b, /*critical=*/true);
        Sync(b, /*critical=*/false);
        WriteBack(b);
        LandUpTo(b);
      } else {
        if (b > 0 && !waits_for_previous) Sync(b - 1, /*critical=*/false);
        Sync(b, /*critical=*/true);
        if (b > 0 && !waits_for_previous) {
          WriteBack(b - 1);
          LandUpTo(b - 1);
        }
      }
    }
    if (o_.lazy && n > 0 && errors_.empty()) {
      Sync(n - 1, false);
      WriteBack(n - 1);
    }
    if (!errors_.empty()) return errors_;
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      for (uint32_t s = 0; s < o_.capacity; ++s) {
        if (caches_[w][s].state != State::kFree) Fail("trainer " + std::to_string(w) + " slot " + std::to_string(s) +
                                                      " still holds " + Name(caches_[w][s].key) + " at the end");
      }
    }
    for (const auto& [key, version] : truth_) {
      if (store_[key] != version) {
        Fail("row " + Name(key) + " ends at version " + std::to_string(store_[key]) + " in the store, not " +
             std::to_string(version));
      }
    }
    return errors_;
  }

 private:
  void Fail(const std::string& what) {
    if (errors_.size() < 20) errors_.push_back(what);
  }

  bool UsedIn(Key key, int64_t from, int64_t to) const {
    auto it = uses_.find(key);
    if (it == uses_.end()) return false;
    auto first = std::lower_bound(it->second.begin(), it->second.end(), from);
    return first != it->second.end() && *first <= to;
  }

  static std::set<Key> Keys(const std::vector<RowSlot>& rows) {
    std::set<Key> keys;
    for (const RowSlot& r : rows) keys.insert(KeyOf(r.table, r.row));
    return keys;
  }

  // The window of batch b: the options' L, or its plans' own.
  int64_t LookaheadOf(int64_t b) const {
    return o_.varying_lookahead && !plans_[b].empty() ? plans_[b][0].lookahead : o_.lookahead;
  }

  // Each trainer's own slots in use, from the plans: a slot is the
  // trainer's from the batch whose prefetch (shared or its private) lands a
  // row in it until the first batch whose barrier covers the batch after
  // which it was freed (the trainer's evictions name it: shared evictions,
  // and its private prefetches with itself as writer).
  void CheckOccupancy() {
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      std::map<uint32_t, int64_t> freed_after;  // slot -> batch after which it was freed; -1: live
      for (size_t j = 0; j < plans_.size(); ++j) {
        if (plans_[j].size() != o_.trainers) return;
        const TrainerPlan& p = plans_[j][w];
        for (auto it = freed_after.begin(); it != freed_after.end();) {
          it = it->second >= 0 && it->second <= p.barrier ? freed_after.erase(it) : std::next(it);
        }
        for (const auto* list : {&p.prefetch, &p.private_prefetch}) {
          for (const RowSlot& r : *list) freed_after[r.slot] = -1;
        }
        if (p.occupancy != freed_after.size()) {
          Fail("batch " + std::to_string(j) + " trainer " + std::to_string(w) + ": occupancy " +
               std::to_string(p.occupancy) + ", but the trainer holds " + std::to_string(freed_after.size()) +
               " slots (quarantine included)");
        }
        for (const Eviction& e : p.evictions) freed_after[e.slot] = static_cast<int64_t>(j);
      }
    }
  }

  // The plans' sets against the definitions of ARCHITECTURE §3. Called for
  // b = 0, 1, … in order: live_ follows which rows the windows keep cached.
  void CheckSets(int64_t b) {
    const auto& plans = plans_[b];
    const std::string at = "batch " + std::to_string(b) + ": ";
    const int64_t L = LookaheadOf(b);
    if (plans.size() != o_.trainers) return Fail(at + std::to_string(plans.size()) + " plans");
    std::set<Key> missed, privates, shared;
    std::map<Key, uint32_t> writer;
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      const TrainerPlan& p = plans[w];
      const std::string atw = at + "trainer " + std::to_string(w) + ": ";
      if (p.batch != b || p.trainer != w || p.lookahead != L) Fail(atw + "wrong header");
      const int64_t barrier = std::max<int64_t>(-1, b - L - 1);
      if (o_.varying_lookahead ? p.barrier < barrier || p.barrier >= b : p.barrier != barrier) {
        Fail(atw + "barrier " + std::to_string(p.barrier));
      }
      if (p.occupancy > o_.capacity) Fail(atw + "occupancy " + std::to_string(p.occupancy) + " above the capacity");
      if (p.prefetch != plans[0].prefetch || p.critical != plans[0].critical || p.delayed != plans[0].delayed) {
        Fail(atw + "shared lists differ from trainer 0's");
      }
      for (const auto* list : {&p.prefetch, &p.private_prefetch}) {
        for (const RowSlot& r : *list) {
          if (!missed.insert(KeyOf(r.table, r.row)).second && list == &p.private_prefetch) {
            Fail(atw + "prefetches " + Name(KeyOf(r.table, r.row)) + " twice");
          }
        }
      }
      for (const RowSlot& r : p.private_rows) {
        const Key k = KeyOf(r.table, r.row);
        auto it = users_[b].find(k);
        if (it == users_[b].end() || it->second != (1ull << w) || UsedIn(k, b + 1, b + L)) {
          Fail(atw + "private row " + Name(k) + " is used by another trainer or again within the window");
        }
        if (!privates.insert(k).second) Fail(atw + "private row " + Name(k) + " listed twice");
      }
      const std::set<Key> own_private = Keys(p.private_rows);
      for (const RowSlot& r : p.private_prefetch) {
        if (!own_private.count(KeyOf(r.table, r.row))) Fail(atw + "private prefetch not in private rows");
      }
      if (p.features.size() != batches_[b].tables.size()) {
        Fail(atw + "features of " + std::to_string(p.features.size()) + " tables");
      }
      for (size_t t = 0; t < p.features.size(); ++t) {
        if (p.features[t].table != t) Fail(atw + "features out of table order");
      }
      for (const Eviction& e : p.evictions) {
        const Key k = KeyOf(e.table, e.row);
        auto [it, fresh] = writer.emplace(k, e.writer);
        if (!fresh && it->second != e.writer) Fail(atw + "writer of " + Name(k) + " differs between trainers");
        if (e.writer >= o_.trainers) Fail(atw + "writer out of range");
      }
    }
    // Misses: exactly the rows of b that are not cached: a row stays cached
    // after a batch while that batch's window (b+1 … b+L) uses it again;
    // with one L throughout, the rows no batch of [b−L, b) used.
    std::set<Key> expect_missed, expect_private, expect_evicted, expect_critical, expect_delayed;
    for (const auto& [k, users] : users_[b]) {
      if (live_.insert(k).second) expect_missed.insert(k);
    }
    for (auto it = live_.begin(); it != live_.end();) {
      if (UsedIn(*it, b + 1, b + L)) {
        ++it;
      } else {
        expect_evicted.insert(*it);
        it = live_.erase(it);
      }
    }
    for (const auto& [k, users] : users_[b]) {
      const bool again = UsedIn(k, b + 1, b + L);
      if (o_.private_rows && !again && (users & (users - 1)) == 0) {
        expect_private.insert(k);
      } else {
        const bool next_reads = L >= 1 && users_.size() > static_cast<size_t>(b + 1) && users_[b + 1].count(k);
        (next_reads || !o_.delayed_sync ? expect_critical : expect_delayed).insert(k);
      }
    }
    if (missed != expect_missed) Fail(at + "prefetches are not exactly the rows the windows did not keep cached");
    if (privates != expect_private) Fail(at + "private rows are not exactly the one-trainer rows not used again");
    if (Keys(plans[0].critical) != expect_critical) {
      Fail(at + "critical rows are not exactly the shared rows b+1 reads");
    }
    if (Keys(plans[0].delayed) != expect_delayed) Fail(at + "delayed rows are not exactly the other shared rows");
    std::set<Key> evicted;
    // Per cache partition (keyed by its first slot): write-backs per trainer.
    std::map<uint32_t, std::vector<uint64_t>> load, private_load;
    for (const auto& [k, w] : writer) {
      evicted.insert(k);
      const uint32_t partition = o_.table_slots.at(k >> 32).first;
      load.try_emplace(partition, o_.trainers, 0);
      private_load.try_emplace(partition, o_.trainers, 0);
      ++load[partition][w];
      if (privates.count(k)) {
        ++private_load[partition][w];
        if (users_[b].at(k) != (1ull << w)) Fail(at + "private row " + Name(k) + " written back by another trainer");
      }
    }
    if (evicted != expect_evicted) Fail(at + "evictions are not exactly the cached rows no batch of b+1 … b+L uses");
    // Write-backs spread evenly within each partition: the busiest trainer
    // has no more than its private rows force or an even share.
    for (const auto& [partition, loads] : load) {
      const auto& forced = private_load[partition];
      uint64_t total = 0;
      for (uint64_t l : loads) total += l;
      const uint64_t even = (total + o_.trainers - 1) / o_.trainers;
      const uint64_t bound = std::max(even, *std::max_element(forced.begin(), forced.end()));
      if (*std::max_element(loads.begin(), loads.end()) != bound) {
        Fail(at + "write-backs of the partition at slot " + std::to_string(partition) + " are not spread evenly");
      }
    }
  }

  // Lands the prefetches of every batch whose barrier is <= e.
  void LandUpTo(int64_t e) {
    for (size_t j = 0; j < plans_.size(); ++j) {
      if (landed_[j] || plans_[j][0].barrier > e) continue;
      landed_[j] = true;
      for (uint32_t w = 0; w < o_.trainers; ++w) {
        const TrainerPlan& p = plans_[j][w];
        for (const auto* list : {&p.prefetch, &p.private_prefetch}) {
          for (const RowSlot& r : *list) Land(static_cast<int64_t>(j), w, r);
        }
      }
    }
  }

  void Land(int64_t j, uint32_t w, const RowSlot& r) {
    const Key k = KeyOf(r.table, r.row);
    const std::string at =
        "prefetch of batch " + std::to_string(j) + " trainer " + std::to_string(w) + " row " + Name(k);
    if (r.table >= o_.table_slots.size() || r.slot < o_.table_slots[r.table].first ||
        r.slot >= o_.table_slots[r.table].second) {
      return Fail(at + ": slot " + std::to_string(r.slot) + " outside its partition");
    }
    Slot& s = caches_[w][r.slot];
    if (s.state != State::kFree) {
      return Fail(at + ": slot " + std::to_string(r.slot) + " still holds " + Name(s.key) +
                  (s.state == State::kLive ? " (live)" : " (awaiting its sync or write-back)"));
    }
    if (where_[w].count(k)) return Fail(at + ": already cached");
    if (store_[k] != truth_[k]) return Fail(at + ": the store is behind");
    s = Slot{State::kLive, k, store_[k], j, false, false};
    where_[w][k] = r.slot;
  }

  void RunBatch(int64_t b) {
    const auto& batch = batches_[b];
    const uint32_t n = static_cast<uint32_t>(batch.size());
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      const TrainerPlan& p = plans_[b][w];
      const std::string at = "batch " + std::to_string(b) + " trainer " + std::to_string(w) + ": ";
      const uint32_t begin = static_cast<uint32_t>(uint64_t{n} * w / o_.trainers);
      const uint32_t end = static_cast<uint32_t>(uint64_t{n} * (w + 1) / o_.trainers);
      for (const TableFeatures& f : p.features) {
        const auto& kjt = batch.tables[f.table];
        if (f.offsets.size() != end - begin + 1) return Fail(at + "features have the wrong sample count");
        if (std::set<uint32_t>(f.unique_slots.begin(), f.unique_slots.end()).size() != f.unique_slots.size()) {
          return Fail(at + "a slot repeats in table " + std::to_string(f.table));
        }
        for (uint32_t i = begin; i < end; ++i) {
          const uint32_t len = kjt.offsets[i + 1] - kjt.offsets[i];
          if (f.offsets[i - begin + 1] - f.offsets[i - begin] != len) return Fail(at + "bag lengths differ");
          for (uint32_t q = 0; q < len; ++q) {
            const Key k = KeyOf(f.table, kjt.values[kjt.offsets[i] + q]);
            const uint32_t slot = f.unique_slots.at(f.inverse.at(f.offsets[i - begin] + q));
            const Slot& s = caches_[w].at(slot);
            if (s.state != State::kLive || s.key != k) {
              return Fail(at + "reads " + Name(k) + " from slot " + std::to_string(slot) + ", which holds " +
                          (s.state == State::kFree ? std::string("nothing") : Name(s.key)));
            }
            if (s.version != truth_[k]) {
              return Fail(at + "reads " + Name(k) + " at version " + std::to_string(s.version) + ", latest " +
                          std::to_string(truth_[k]));
            }
          }
        }
      }
      // The oracle's occupancy bounds what this cache holds for batches <= b.
      uint32_t held = 0;
      for (const Slot& s : caches_[w]) held += s.state != State::kFree && s.landed <= b;
      if (held > p.occupancy) {
        Fail(at + std::to_string(held) + " slots held, occupancy says " + std::to_string(p.occupancy));
      }
    }
    // The update: every row b touches, once.
    std::set<Key> privates;
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      for (const RowSlot& r : plans_[b][w].private_rows) {
        const Key k = KeyOf(r.table, r.row);
        privates.insert(k);
        Slot& s = caches_[w][r.slot];
        if (s.state != State::kLive || s.key != k) return Fail("private row " + Name(k) + " not in its owner's slot");
        ++s.version;
      }
    }
    for (const auto& [k, users] : users_[b]) {
      ++truth_[k];
      if (privates.count(k)) continue;
      for (uint32_t w = 0; w < o_.trainers; ++w) {
        auto it = where_[w].find(k);
        if (it == where_[w].end()) return Fail("shared row " + Name(k) + " of batch " + std::to_string(b) +
                                               " is not in trainer " + std::to_string(w) + "'s cache");
        caches_[w][it->second].sync_pending = true;
      }
    }
  }

  void Evict(int64_t b) {
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      for (const Eviction& e : plans_[b][w].evictions) {
        const Key k = KeyOf(e.table, e.row);
        Slot& s = caches_[w][e.slot];
        if (s.state != State::kLive || s.key != k) {
          return Fail("batch " + std::to_string(b) + " trainer " + std::to_string(w) + " evicts " + Name(k) +
                      " from a slot that does not hold it");
        }
        where_[w].erase(k);
        s.writer = e.writer == w;
        s.state = s.writer || s.sync_pending ? State::kRetiring : State::kFree;
      }
      // TTLs are exact: what stays is used again within the window.
      for (const auto& [k, slot] : where_[w]) {
        if (o_.exact_ttl && caches_[w][slot].landed <= b && !UsedIn(k, b + 1, b + LookaheadOf(b))) {
          Fail("trainer " + std::to_string(w) + " keeps " + Name(k) + " after batch " + std::to_string(b) +
               " though the window does not use it");
        }
      }
    }
  }

  void Sync(int64_t b, bool critical) {
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      for (const RowSlot& r : critical ? plans_[b][w].critical : plans_[b][w].delayed) {
        const Key k = KeyOf(r.table, r.row);
        Slot& s = caches_[w][r.slot];
        if (s.state == State::kFree || s.key != k || !s.sync_pending) {
          return Fail("sync of batch " + std::to_string(b) + " row " + Name(k) + " finds trainer " +
                      std::to_string(w) + "'s slot " + std::to_string(r.slot) + " not waiting for it");
        }
        ++s.version;
        s.sync_pending = false;
        if (s.state == State::kRetiring && !s.writer) s = Slot{};
      }
    }
  }

  void WriteBack(int64_t e) {
    for (uint32_t w = 0; w < o_.trainers; ++w) {
      for (const Eviction& ev : plans_[e][w].evictions) {
        if (ev.writer != w) continue;
        const Key k = KeyOf(ev.table, ev.row);
        Slot& s = caches_[w][ev.slot];
        if (s.state != State::kRetiring || s.key != k || s.sync_pending) {
          return Fail("write-back of " + Name(k) + " after batch " + std::to_string(e) + " finds its slot " +
                      (s.sync_pending ? "not synced" : "reused"));
        }
        if (s.version != truth_[k]) return Fail("write-back of " + Name(k) + " carries a stale version");
        store_[k] = s.version;
        s = Slot{};
      }
    }
  }

  const ExecutorOptions& o_;
  const std::vector<data::SampleBlock>& batches_;
  const std::vector<std::vector<TrainerPlan>>& plans_;
  std::vector<std::unordered_map<Key, uint64_t>> users_;  // per batch: row -> trainers (bit w)
  std::unordered_map<Key, std::vector<int64_t>> uses_;    // row -> batches using it, ascending
  std::vector<std::vector<Slot>> caches_;
  std::vector<std::unordered_map<Key, uint32_t>> where_;  // per trainer: live row -> slot
  std::unordered_map<Key, uint32_t> truth_, store_;
  std::vector<bool> landed_;
  std::set<Key> live_;  // CheckSets: the rows cached after the batches checked so far
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> Execute(const ExecutorOptions& options, const std::vector<data::SampleBlock>& batches,
                                 const std::vector<std::vector<TrainerPlan>>& plans) {
  return Executor(options, batches, plans).Run();
}

}  // namespace actorrec::oracle::testing
