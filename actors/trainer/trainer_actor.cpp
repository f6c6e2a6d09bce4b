#include "actors/trainer/trainer_actor.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/sync/sync_scheduler_actor.hpp"
#include "messages/batch_codec.hpp"
#include "messages/plan_codec.hpp"
#include "messages/rows_codec.hpp"

namespace actorrec::trainer {
namespace {

using Clock = std::chrono::steady_clock;
double NowSeconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

struct Work {
  oracle::TrainerPlan plan;
  data::Batch slice;
  uint64_t batch_samples = 0;
  double loss = 0;
  std::vector<double> times = std::vector<double>(kSettledTimes, 0.0);
  double critical_sent_s = 0, delayed_sent_s = 0;
  uint64_t sync_floats = 0;
  // With sums in the backend's memory (TrainerCore::sums_resident): the
  // packed gradients, summed in place by the scheduler; from the state's
  // spare buffers and given back when the batch settles.
  gpu::Buffer critical, delayed;
};

struct TrainerState {
  static inline const char* name = "trainer";
  TrainerActorArgs args;
  std::map<int64_t, Work> work;  // planned batches not yet settled
  std::set<int64_t> landed;
  CachedRows cached;
  int64_t next = 0;               // the batch to compute next
  bool critical_pending = false;  // the critical sync of next − 1 is not applied yet
  double blocked_on_rows_s = 0;   // when the trainer started waiting only for rows; 0: not waiting
  bool failed = false;
  // Settled batches' sync buffers, reused (at most two batches are in
  // flight: the critical sum of b comes back before b+1 computes).
  std::vector<gpu::Buffer> spare;
};

using Self = Metered<caf::stateful_actor<TrainerState>>*;  // counted for the inspector (actor_meter.hpp)

// The distinct slots the slice reads, sorted (a dedup group's tuples may
// repeat a row within a table; tables never share a slot).
std::vector<uint32_t> SlotsRead(const std::vector<oracle::TableFeatures>& features) {
  std::vector<uint32_t> slots;
  for (const oracle::TableFeatures& f : features) slots.insert(slots.end(), f.unique_slots.begin(), f.unique_slots.end());
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

// Of the slots read, those the plan fetched for this batch (its misses: a
// shared prefetch lands in every cache, read there or not).
uint64_t MissesRead(const oracle::TrainerPlan& plan, const std::vector<uint32_t>& read) {
  uint64_t misses = 0;
  for (const auto* list : {&plan.prefetch, &plan.private_prefetch}) {
    for (const oracle::RowSlot& r : *list) misses += std::binary_search(read.begin(), read.end(), r.slot);
  }
  return misses;
}

void Fail(Self self, const std::string& what) {
  self->state.failed = true;
  self->send(self->state.args.driver, error_atom::value,
             "trainer " + std::to_string(self->state.args.trainer) + ": " + what);
}

void TryAdvance(Self self) {
  auto& st = self->state;
  if (st.failed || st.critical_pending) return;
  auto it = st.work.find(st.next);
  if (it == st.work.end()) return;
  if (!st.landed.count(st.next)) {
    if (st.blocked_on_rows_s == 0) st.blocked_on_rows_s = NowSeconds();
    return;
  }
  Work& w = it->second;
  TrainerCore& core = *st.args.core;
  const double start = NowSeconds();
  if (st.blocked_on_rows_s != 0) w.times[kWaitRows] = start - st.blocked_on_rows_s;
  st.blocked_on_rows_s = 0;
  st.landed.erase(st.next);
  for (const auto* list : {&w.plan.prefetch, &w.plan.private_prefetch}) {
    for (const oracle::RowSlot& r : *list) st.cached[CachedRowKey(r.table, r.row)] = r.slot;
  }

  core.cache().BeforeCompute(st.next);  // its rows' copies, and no later batch's
  core.BeforeCompute(st.next, w.slice.samples, w.plan.bag_groups);  // its inputs' copy alone
  // The next batch's inputs go up while this one computes (on a device).
  if (auto next = st.work.find(st.next + 1); next != st.work.end()) {
    core.StageInputs(st.next + 1, next->second.slice.samples, next->second.plan.bag_groups);
  }
  core.Forward(w.slice.samples, w.plan.features, w.plan.bag_groups);
  const double forwarded = NowSeconds();
  w.loss = core.Backward(w.slice.samples, w.plan.features, 1.0f / static_cast<float>(w.batch_samples), w.plan.bag_groups);
  const double computed = NowSeconds();
  w.times[kForward] = forwarded - start;
  w.times[kBackward] = computed - forwarded;
  for (const oracle::RowSlot& r : w.plan.private_rows) {
    if (!core.Touched(r.slot)) {
      return Fail(self, "batch " + std::to_string(st.next) + ": private row in slot " + std::to_string(r.slot) +
                            " was not used by its owner");
    }
  }
  core.ApplyPrivateRows(w.plan.private_rows);
  // Dense and critical in one collective: the sum is elementwise in rank
  // order, so packing them together changes no bit.
  const auto kCriticalKind = static_cast<uint8_t>(SyncKind::kCritical);
  const auto kDelayedKind = static_cast<uint8_t>(SyncKind::kDelayed);
  if (core.sums_resident()) {  // packed and summed in the backend's memory; only where they are goes
    for (gpu::Buffer* b : {&w.critical, &w.delayed}) {
      if (!st.spare.empty()) {
        *b = std::move(st.spare.back());
        st.spare.pop_back();
      }
    }
    const uint64_t critical = core.PackResident(true, w.plan.critical, &w.critical);
    const uint64_t delayed = core.PackResident(false, w.plan.delayed, &w.delayed);
    w.times[kApply] = NowSeconds() - computed;
    w.sync_floats = critical + delayed;
    core.SyncStarts();
    w.critical_sent_s = NowSeconds();
    self->send(st.args.scheduler, sync_atom::value, st.next, kCriticalKind, w.critical_sent_s,
               ResidentAddress(w.critical.data()), critical);
    w.delayed_sent_s = NowSeconds();
    self->send(st.args.scheduler, sync_atom::value, st.next, kDelayedKind, w.delayed_sent_s,
               ResidentAddress(w.delayed.data()), delayed);
  } else {
    const auto dense = core.dense_grads();
    std::vector<float> critical(dense.begin(), dense.end());
    core.PackRowGrads(w.plan.critical, &critical);
    std::vector<float> delayed;
    core.PackRowGrads(w.plan.delayed, &delayed);
    w.times[kApply] = NowSeconds() - computed;
    w.sync_floats = critical.size() + delayed.size();
    core.SyncStarts();
    w.critical_sent_s = NowSeconds();
    self->send(st.args.scheduler, sync_atom::value, st.next, kCriticalKind, w.critical_sent_s, std::move(critical));
    w.delayed_sent_s = NowSeconds();
    self->send(st.args.scheduler, sync_atom::value, st.next, kDelayedKind, w.delayed_sent_s, std::move(delayed));
  }
  st.critical_pending = true;
  ++st.next;
}

// The sums of `batch`'s `kind`: `sums` (size floats) on the host, or with
// `resident` in the batch's own buffer in the backend's memory.
void OnSynced(Self self, int64_t batch, uint8_t kind, double behind_s, const float* sums, size_t size,
              bool resident) {
  auto& st = self->state;
  auto it = st.work.find(batch);
  if (it == st.work.end()) return Fail(self, "sync result for batch " + std::to_string(batch) + ", not in flight");
  Work& w = it->second;
  TrainerCore& core = *st.args.core;
  if (resident != core.sums_resident()) {
    return Fail(self, "sync result for batch " + std::to_string(batch) + (resident ? " in" : " not in") +
                          " the backend's memory, where this trainer's sums are" + (resident ? " not" : ""));
  }
  const double start = NowSeconds();
  if (kind == static_cast<uint8_t>(SyncKind::kCritical)) {
    w.times[kCriticalSync] = start - w.critical_sent_s;
    w.times[kExposedDelayed] = behind_s;
    const size_t dense = core.dense_grads().size();
    if (size != dense + w.plan.critical.size() * core.width()) {
      return Fail(self, "critical sync of batch " + std::to_string(batch) + " returned " + std::to_string(size) +
                            " floats");
    }
    if (resident) {
      core.ApplyDenseResident(w.critical.data());
      core.ApplyRowsResident(w.plan.critical, w.critical.data() + dense);
    } else {
      core.ApplyDense(std::span<const float>(sums, dense));
      core.ApplyRows(w.plan.critical, sums + dense);
    }
    // This batch's waits, before the next batch's compute adds its own.
    const gpu::StreamWaits waits = core.TakeStreamWaits(w.times[kWaitRows], w.times[kCriticalSync]);
    w.times[kStreamWaitRows] = waits.rows_s;
    w.times[kStreamWaitSync] = waits.sync_s;
    w.times[kWaitsOnDevice] = waits.on_device ? 1.0 : 0.0;
    w.times[kApply] += NowSeconds() - start;
    st.critical_pending = false;
    return TryAdvance(self);
  }
  if (size != w.plan.delayed.size() * core.width()) {
    return Fail(self, "delayed sync of batch " + std::to_string(batch) + " returned " + std::to_string(size) +
                          " floats");
  }
  if (resident) {
    core.ApplyRowsResident(w.plan.delayed, w.delayed.data());
  } else {
    core.ApplyRows(w.plan.delayed, sums);
  }
  w.times[kDelayedSync] = start - w.delayed_sent_s;
  w.times[kApply] += NowSeconds() - start;
  // Settled: every update of b is in the caches; its evictions may go back.
  for (const oracle::Eviction& e : w.plan.evictions) st.cached.erase(CachedRowKey(e.table, e.row));
  self->send(st.args.partition, write_atom::value, batch);
  std::vector<uint64_t> counts(kSettledCounts, 0);
  counts[kSharedMisses] = w.plan.prefetch.size();
  counts[kPrivateMisses] = w.plan.private_prefetch.size();
  counts[kPrefetched] = counts[kSharedMisses] + counts[kPrivateMisses];
  counts[kPrivateUpdated] = w.plan.private_rows.size();
  counts[kCritical] = w.plan.critical.size();
  counts[kDelayed] = w.plan.delayed.size();
  for (const oracle::Eviction& e : w.plan.evictions) counts[kWritten] += e.writer == st.args.trainer;
  const std::vector<uint32_t> read = SlotsRead(w.plan.features);
  counts[kRows] = read.size();
  counts[kReadMisses] = MissesRead(w.plan, read);
  counts[kEvictions] = w.plan.evictions.size();
  counts[kSyncFloats] = w.sync_floats;
  counts[kOccupancy] = w.plan.occupancy;
  counts[kLookahead] = w.plan.lookahead;
  self->send(st.args.driver, settled_atom::value, st.args.trainer, batch, w.slice.epoch, w.slice.index,
             w.batch_samples, w.loss, w.times, counts);
  self->send(st.args.oracle, settled_atom::value, st.args.trainer, batch);
  // Their last readers (the row updates) are ordered before any later op
  // of the backend, so the next batches may pack into them.
  for (gpu::Buffer* b : {&w.critical, &w.delayed}) {
    if (b->data() != nullptr) st.spare.push_back(std::move(*b));
  }
  st.work.erase(it);
}

// A Rows frame of keys[i]'s value in cache slot slots[i].
wire::Frame<wire::Rows> EncodeSlots(TrainerCore& core, const wire::RowKeys& keys, const std::vector<uint32_t>& slots) {
  wire::RowsHeader h;
  h.dim = core.width();
  h.state_width = core.row_floats() - core.width();
  Status fill_status;
  return wire::EncodeRows(
      h, keys,
      [&](float* out) {
        core.cache().VisitRows(slots.data(), slots.size(), [&](size_t i, const float* src) {
          std::copy_n(src, core.row_floats(), out + i * core.row_floats());
        });
        return Status::Ok();
      },
      &fill_status);
}

caf::behavior Trainer(Self self, TrainerActorArgs args) {
  self->state.args = std::move(args);
  self->state.next = self->state.args.first_batch;
  self->set_default_handler(ReportUnexpected);
  return {
      [=](const wire::Frame<wire::TrainerPlan>& plan_frame, const wire::Frame<wire::Batch>& slice_frame,
          uint64_t batch_samples) {
        auto& st = self->state;
        Work w;
        w.batch_samples = batch_samples;
        if (Status s = wire::DecodePlan(plan_frame, &w.plan); !s.ok()) return Fail(self, s.ToString());
        if (Status s = wire::DecodeBatch(slice_frame, &w.slice); !s.ok()) return Fail(self, s.ToString());
        if (w.plan.trainer != st.args.trainer) {
          return Fail(self, "received the plan of trainer " + std::to_string(w.plan.trainer));
        }
        const int64_t b = w.plan.batch;
        auto [it, fresh] = st.work.emplace(b, std::move(w));
        // The next batch to compute: its inputs go up now, while the batch
        // before it computes or syncs (on a device; TrainerCore::StageInputs).
        if (fresh && b == st.next && !st.failed) {
          st.args.core->StageInputs(b, it->second.slice.samples, it->second.plan.bag_groups);
        }
        TryAdvance(self);
      },
      [=](landed_atom, int64_t batch) {
        self->state.landed.insert(batch);
        TryAdvance(self);
      },
      [=](synced_atom, int64_t batch, uint8_t kind, double behind_s, const std::vector<float>& sums) {
        OnSynced(self, batch, kind, behind_s, sums.data(), sums.size(), false);
      },
      [=](synced_atom, int64_t batch, uint8_t kind, double behind_s, uint64_t floats) {
        OnSynced(self, batch, kind, behind_s, nullptr, floats, true);
      },
      [=](digest_atom) { return DenseDigest(*self->state.args.core); },
      [=](dense_atom) -> caf::result<std::vector<float>, std::vector<float>> {
        TrainerCore& core = *self->state.args.core;
        const auto params = core.model().params();
        const auto state = core.dense_optimizer().state();
        return {std::vector<float>(params.begin(), params.end()), std::vector<float>(state.begin(), state.end())};
      },
      [=](position_atom) { return self->state.args.first_batch; },
      [=](cached_atom) {
        TrainerCore& core = *self->state.args.core;
        wire::RowKeys keys;
        std::vector<uint32_t> slots;
        for (const auto& [key, slot] : self->state.cached) {
          keys.push_back(static_cast<uint32_t>(key >> 32), static_cast<data::RowId>(key));
          slots.push_back(slot);
        }
        return EncodeSlots(core, keys, slots);
      },
      [=](peek_atom, const wire::Frame<wire::RowFetch>& frame) -> caf::result<wire::Frame<wire::Rows>> {
        TrainerCore& core = *self->state.args.core;
        wire::RowFetchHeader header;
        wire::RowKeys asked, held;
        if (Status st = wire::DecodeRowFetch(frame, &header, &asked); !st.ok()) {
          return caf::make_error(caf::sec::invalid_argument, st.ToString());
        }
        std::vector<uint32_t> slots;
        for (size_t i = 0; i < asked.size(); ++i) {
          const auto it = self->state.cached.find(CachedRowKey(asked.tables[i], asked.rows[i]));
          if (it == self->state.cached.end()) continue;
          held.push_back(asked.tables[i], asked.rows[i]);
          slots.push_back(it->second);
        }
        return EncodeSlots(core, held, slots);
      },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnTrainerActor(caf::actor_system& sys, TrainerActorArgs args) {
  return sys.spawn<caf::detached>(Trainer, std::move(args));
}

}  // namespace actorrec::trainer
