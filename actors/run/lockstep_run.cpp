#include "actors/run/lockstep_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "actors/oracle/planner.hpp"
#include "actors/oracle/planner_options.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "actors/run/checkpoint.hpp"
#include "actors/sync/row_sync.hpp"
#include "base/digest.hpp"
#include "gpu/cpu_backend.hpp"
#include "models/init.hpp"

namespace actorrec::trainer {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

LockstepRun::~LockstepRun() = default;

const std::string& LockstepRun::lookahead_report() const {
  return planner_ ? planner_->lookahead_report() : lookahead_report_;
}

uint64_t LockstepRun::row_bytes() const { return uint64_t{parts_->row_optimizer->row_floats()} * sizeof(float); }

// A resident row's starting value: its shard's (the initial value of an
// untouched row, or what a resumed checkpoint holds).
Status LockstepRun::LoadResident(uint32_t t, uint64_t r, float* out) const {
  return parts_->shards[embedding::ShardOf(t, r, shards())]->Peek(t, static_cast<uint32_t>(r), out);
}

Result<std::unique_ptr<LockstepRun>> LockstepRun::Create(const config::Config& cfg) { return Create(cfg, {}); }

Result<std::unique_ptr<LockstepRun>> LockstepRun::Create(const config::Config& cfg,
                                                         const PlannerFactory& make_planner) {
  auto parts = RunParts::Create(cfg);
  if (!parts.ok()) return parts.status();
  return Create(std::move(parts).value(), BatchPosition{}, 0, make_planner);
}

Result<std::unique_ptr<LockstepRun>> LockstepRun::Create(std::unique_ptr<RunParts> parts, BatchPosition start,
                                                         uint64_t first_batch, const PlannerFactory& make_planner) {
  std::unique_ptr<LockstepRun> run(new LockstepRun());
  run->parts_ = std::move(parts);
  run->position_ = {first_batch, start};
  run->first_batch_ = first_batch;
  const config::Config& cfg = run->parts_->cfg;
  run->mode_ = cfg.training.mode;
  const uint32_t W = run->parts_->W();
  const uint32_t T = run->parts_->T();
  BatchSequence::Options seq = run->parts_->SequenceOptions();
  seq.start = start;
  if (seq.max_batches != 0) seq.max_batches = seq.max_batches > first_batch ? seq.max_batches - first_batch : 0;
  if (cfg.training.max_batches != 0 && first_batch >= cfg.training.max_batches) seq.epochs = 0;
  run->sequence_ = std::make_unique<BatchSequence>(run->parts_->TrainSource(), seq);
  run->builder_ = std::make_unique<oracle::BatchRowsBuilder>(run->parts_->table_rows);
  run->builder_->SetDedupGroups(cfg.dataset.dedup_groups);
  run->slices_.resize(W);

  switch (run->mode_) {
    case config::Mode::kLrppDelayed:
    case config::Mode::kLrpp:
    case config::Mode::kReplicated: {
      auto options = PlannerOptionsOf(cfg, run->parts_->table_rows, first_batch);
      if (!options.ok()) return options.status();
      run->planner_ = make_planner ? make_planner(*options) : std::make_unique<oracle::Planner>(*options);
      for (auto& t : run->parts_->trainers) t->EnsureSlots(static_cast<uint32_t>(cfg.training.cache_rows));
      break;
    }
    case config::Mode::kIdeal: {
      uint64_t total = 0;
      for (uint64_t rows : run->parts_->table_rows) {
        run->table_base_.push_back(total);
        total += rows;
      }
      if (total >= (uint64_t{1} << 31)) {
        return Status::InvalidArgument("training.mode = \"ideal\" keeps every row in every trainer; " +
                                       std::to_string(total) + " rows are too many (use another mode)");
      }
      run->resident_slots_ = static_cast<uint32_t>(total);
      break;
    }
    case config::Mode::kStaticHot:
      if (Status st = run->ChooseHotRows(cfg); !st.ok()) return st;
      break;
    case config::Mode::kNoCache:
      break;
  }
  if (!run->planned()) {
    run->resident_touched_.assign(run->resident_slots_, 0);
    for (auto& t : run->parts_->trainers) t->EnsureSlots(run->resident_slots_);
    run->direct_features_.resize(W);
    run->direct_groups_.resize(W);
    run->staged_.resize(W);
    // Resident rows start at their initial values in every replica.
    const uint32_t floats = run->parts_->row_optimizer->row_floats();
    std::vector<float> resident(size_t{run->resident_slots_} * floats, 0.0f);
    for (uint32_t t = 0; t < T && run->mode_ == config::Mode::kIdeal; ++t) {
      for (uint64_t r = 0; r < run->parts_->table_rows[t]; ++r) {
        const uint32_t slot = static_cast<uint32_t>(run->table_base_[t] + r);
        if (Status st = run->LoadResident(t, r, resident.data() + size_t{slot} * floats); !st.ok()) return st;
      }
    }
    for (const auto& [key, slot] : run->hot_slot_) {
      Status st = run->LoadResident(static_cast<uint32_t>(key >> 32), key & 0xffffffffu,
                                    resident.data() + size_t{slot} * floats);
      if (!st.ok()) return st;
    }
    std::vector<uint32_t> every(run->resident_slots_);
    for (uint32_t s = 0; s < run->resident_slots_; ++s) every[s] = s;
    for (uint32_t w = 0; w < W; ++w) {
      run->parts_->trainers[w]->cache().WriteRows(every.data(), every.size(), resident.data());
    }
  }
  return run;
}

Status LockstepRun::ChooseHotRows(const config::Config& cfg) {
  auto hot = HotRows(cfg);
  if (!hot.ok()) return hot.status();
  for (size_t i = 0; i < hot->rows.size(); ++i) hot_slot_[hot->rows[i]] = static_cast<uint32_t>(i);
  resident_slots_ = static_cast<uint32_t>(hot->rows.size());
  lookahead_report_ = HotRowsReport(hot->rows.size());
  return Status::Ok();
}

Result<bool> LockstepRun::Step(StepReport* report) {
  *report = StepReport{};
  Result<bool> more = planned() ? StepPlanned(report) : StepDirect(report);
  if (more.ok() && *more) {
    // The compute streams' waits, the slowest trainer's; on the host's
    // clock the phases above (every trainer waits for the same fetch and sum).
    for (auto& t : parts_->trainers) {
      const gpu::StreamWaits waits = t->TakeStreamWaits(report->fetch_s, report->dense_sync_s);
      report->stream_wait_rows_s = std::max(report->stream_wait_rows_s, waits.rows_s);
      report->stream_wait_sync_s = std::max(report->stream_wait_sync_s, waits.sync_s);
      report->waits_on_device = waits.on_device;
    }
    ++position_.batches;
    position_.next = {report->epoch, report->batch + 1};
  }
  return more;
}

// ---------------------------------------------------------------- shared steps

double LockstepRun::ComputeAll(const data::Batch& batch,
                               const std::vector<const std::vector<oracle::TableFeatures>*>& features,
                               const std::vector<const std::vector<oracle::BagGroup>*>& groups, StepReport* report) {
  const uint32_t W = trainers();
  const uint32_t n = static_cast<uint32_t>(batch.samples.size());
  const float grad_scale = 1.0f / static_cast<float>(n);
  std::vector<double> losses(W, 0.0);
  for (uint32_t w = 0; w < W; ++w) {
    const oracle::SampleRange range = oracle::SliceOf(n, W, w);
    slices_[w].Reset(batch.samples.num_dense, batch.samples.tables.size());
    slices_[w].Append(batch.samples, range.begin, range.end);
  }
  std::vector<double> forward_s(W, 0.0), backward_s(W, 0.0);
  auto work = [&](uint32_t w) {
    TrainerCore& core = *parts_->trainers[w];
    core.cache().BeforeComputeAll();  // every row fetched so far is this batch's
    core.BeforeCompute(static_cast<int64_t>(batch.index), slices_[w], *groups[w]);  // its inputs, now
    const auto t0 = Clock::now();
    core.Forward(slices_[w], *features[w], *groups[w]);
    forward_s[w] = Since(t0);
    const auto t1 = Clock::now();
    losses[w] = core.Backward(slices_[w], *features[w], grad_scale, *groups[w]);
    backward_s[w] = Since(t1);
  };
  std::vector<std::thread> threads;
  for (uint32_t w = 1; w < W; ++w) threads.emplace_back(work, w);
  work(0);
  for (auto& t : threads) t.join();
  // The trainers run side by side: the slowest one's passes are the step's.
  report->forward_s = *std::max_element(forward_s.begin(), forward_s.end());
  report->backward_s = *std::max_element(backward_s.begin(), backward_s.end());
  double total = 0.0;
  for (double l : losses) total += l;  // rank order
  return total;
}

void LockstepRun::SyncDense() {
  const size_t n = parts_->trainers[0]->dense_grads().size();
  dense_sum_.resize(n);
  for (auto& t : parts_->trainers) t->SyncStarts();
  StartRowSum(dense_sum_.data(), static_cast<uint32_t>(n));
  for (auto& t : parts_->trainers) AddToRowSum(dense_sum_.data(), t->dense_grads().data(), static_cast<uint32_t>(n));
  for (auto& t : parts_->trainers) t->ApplyDense(dense_sum_);
}

Status LockstepRun::FetchInto(const std::vector<oracle::RowSlot>& rows, const std::vector<uint32_t>& to_trainers) {
  if (rows.empty()) return Status::Ok();
  const uint32_t S = shards();
  const uint32_t floats = parts_->row_optimizer->row_floats();
  std::vector<std::vector<uint32_t>> tables(S), ids(S), index(S);
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const uint32_t s = embedding::ShardOf(rows[i].table, rows[i].row, S);
    tables[s].push_back(rows[i].table);
    ids[s].push_back(rows[i].row);
    index[s].push_back(i);
  }
  std::vector<float> buffer;
  for (uint32_t s = 0; s < S; ++s) {
    if (ids[s].empty()) continue;
    buffer.resize(ids[s].size() * floats);
    if (Status st = parts_->shards[s]->Fetch(tables[s].data(), ids[s].data(), ids[s].size(), buffer.data()); !st.ok()) {
      return st;
    }
    std::vector<uint32_t> slots(ids[s].size());
    for (size_t k = 0; k < ids[s].size(); ++k) slots[k] = rows[index[s][k]].slot;
    for (uint32_t w : to_trainers) parts_->trainers[w]->cache().WriteRows(slots.data(), slots.size(), buffer.data());
  }
  return Status::Ok();
}

Status LockstepRun::StoreFrom(uint32_t trainer, const std::vector<oracle::RowSlot>& rows) {
  if (rows.empty()) return Status::Ok();
  const uint32_t S = shards();
  const uint32_t floats = parts_->row_optimizer->row_floats();
  std::vector<std::vector<uint32_t>> tables(S), ids(S);
  std::vector<std::vector<float>> data(S);
  std::vector<uint32_t> slots(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) slots[i] = rows[i].slot;
  std::vector<float> values(rows.size() * floats);
  parts_->trainers[trainer]->cache().VisitRows(slots.data(), slots.size(), [&](size_t i, const float* src) {
    std::memcpy(values.data() + i * floats, src, floats * sizeof(float));
  });
  for (size_t i = 0; i < rows.size(); ++i) {
    const oracle::RowSlot& r = rows[i];
    const uint32_t s = embedding::ShardOf(r.table, r.row, S);
    tables[s].push_back(r.table);
    ids[s].push_back(r.row);
    data[s].insert(data[s].end(), values.data() + i * floats, values.data() + (i + 1) * floats);
  }
  for (uint32_t s = 0; s < S; ++s) {
    if (ids[s].empty()) continue;
    if (Status st = parts_->shards[s]->Store(tables[s].data(), ids[s].data(), ids[s].size(), data[s].data()); !st.ok()) {
      return st;
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- planned modes

Result<bool> LockstepRun::FeedPlanner() {
  while (!planner_->Ready()) {
    if (data_done_) return false;
    data::Batch batch;
    if (Status st = sequence_->Next(&batch); !st.ok()) return st;
    if (sequence_->done()) {
      data_done_ = true;
      if (Status st = planner_->Finish(); !st.ok()) return Status::InvalidArgument("training.cache_rows: " + st.message());
      continue;
    }
    oracle::BatchRows rows = planner_->RecycledRows();
    if (Status st = builder_->Build(batch.samples, trainers(), &rows); !st.ok()) return st;
    if (Status st = planner_->Push(std::move(rows)); !st.ok()) {
      return Status::InvalidArgument("training.cache_rows: " + st.message());
    }
    pending_.push_back(std::move(batch));
  }
  return true;
}

Result<bool> LockstepRun::StepPlanned(StepReport* report) {
  Result<bool> more = FeedPlanner();
  if (!more.ok() || !*more) return more;
  if (Status st = planner_->PlanNext(&plan_); !st.ok()) {
    return Status::InvalidArgument("training.cache_rows: " + st.message());
  }
  data::Batch batch = std::move(pending_.front());
  pending_.pop_front();
  const uint32_t W = trainers();
  report->epoch = batch.epoch;
  report->batch = batch.index;
  report->samples = batch.samples.size();

  // Prefetch: in lockstep every write-back of earlier batches is already on
  // the shards, so the barrier (plan_.barrier) holds.
  auto t0 = Clock::now();
  std::vector<uint32_t> everyone(W);
  for (uint32_t w = 0; w < W; ++w) everyone[w] = w;
  if (Status st = FetchInto(plan_.prefetch, everyone); !st.ok()) return st;
  for (const oracle::RowSlot& r : plan_.prefetch) location_[Key(r.table, r.row)] = {kEveryTrainer, r.slot};
  report->fetched_rows = plan_.prefetch.size() * W;
  report->missed_rows = plan_.prefetch.size();
  for (uint32_t w = 0; w < W; ++w) {
    const auto& own = plan_.trainers[w].private_prefetch;
    if (Status st = FetchInto(own, {w}); !st.ok()) return st;
    for (const oracle::RowSlot& r : own) location_[Key(r.table, r.row)] = {w, r.slot};
    report->fetched_rows += own.size();
    report->missed_rows += own.size();
  }
  report->fetch_s = Since(t0);

  std::vector<const std::vector<oracle::TableFeatures>*> features(W);
  std::vector<const std::vector<oracle::BagGroup>*> groups(W);
  for (uint32_t w = 0; w < W; ++w) {
    features[w] = &plan_.trainers[w].features;
    groups[w] = &plan_.trainers[w].bag_groups;
  }
  report->loss_sum = ComputeAll(batch, features, groups, report);

  t0 = Clock::now();
  SyncDense();
  report->dense_sync_s = Since(t0);

  // Sparse: private rows by their owner; critical and delayed rows summed in
  // rank order and applied by every cache.
  t0 = Clock::now();
  const uint32_t width = parts_->row_optimizer->width();
  for (uint32_t w = 0; w < W; ++w) {
    for (const oracle::RowSlot& r : plan_.trainers[w].private_rows) {
      const float* g = parts_->trainers[w]->RowGrad(r.slot);
      ACTORREC_ASSERT(g != nullptr, "a private row is used by its owner");
      parts_->trainers[w]->ApplyRow(r.slot, g);
    }
    report->private_rows += plan_.trainers[w].private_rows.size();
  }
  row_sums_.resize(width);
  for (const auto* set : {&plan_.critical, &plan_.delayed}) {
    for (const oracle::RowSlot& r : *set) {
      StartRowSum(row_sums_.data(), width);
      for (uint32_t w = 0; w < W; ++w) {
        if (const float* g = parts_->trainers[w]->RowGrad(r.slot)) AddToRowSum(row_sums_.data(), g, width);
      }
      for (uint32_t w = 0; w < W; ++w) parts_->trainers[w]->ApplyRow(r.slot, row_sums_.data());
    }
  }
  report->synced_critical = plan_.critical.size();
  report->synced_delayed = plan_.delayed.size();
  report->unique_rows = plan_.critical.size() + plan_.delayed.size() + report->private_rows;
  report->sparse_sync_s = Since(t0);

  // Evictions: the writer writes each row back; private prefetches go back
  // from their owner.
  t0 = Clock::now();
  std::vector<std::vector<oracle::RowSlot>> writes(W);
  for (const oracle::Eviction& e : plan_.evictions) writes[e.writer].push_back({e.table, e.row, e.slot});
  for (uint32_t w = 0; w < W; ++w) {
    const auto& own = plan_.trainers[w].private_prefetch;
    writes[w].insert(writes[w].end(), own.begin(), own.end());
  }
  for (uint32_t w = 0; w < W; ++w) {
    if (Status st = StoreFrom(w, writes[w]); !st.ok()) return st;
    for (const oracle::RowSlot& r : writes[w]) location_.erase(Key(r.table, r.row));
    report->written_rows += writes[w].size();
  }
  report->write_back_s = Since(t0);
  return true;
}

// ---------------------------------------------------------------- direct modes

Result<bool> LockstepRun::StepDirect(StepReport* report) {
  data::Batch batch;
  if (Status st = sequence_->Next(&batch); !st.ok()) return st;
  if (sequence_->done()) return false;
  const uint32_t W = trainers();
  const uint32_t T = static_cast<uint32_t>(parts_->table_rows.size());
  report->epoch = batch.epoch;
  report->batch = batch.index;
  report->samples = batch.samples.size();
  if (Status st = builder_->Build(batch.samples, W, &rows_); !st.ok()) return st;

  // Slots: resident rows where they live, the others staged after them.
  auto t0 = Clock::now();
  for (uint32_t w = 0; w < W; ++w) {
    auto& features = direct_features_[w];
    auto& staged = staged_[w];
    features.resize(T);
    staged.clear();
    uint32_t next = resident_slots_;
    for (uint32_t t = 0; t < T; ++t) {
      const oracle::SliceTable& slice = rows_.slice(w, t);
      oracle::TableFeatures& f = features[t];
      f.table = t;
      f.inverse = slice.inverse;
      f.offsets = slice.offsets;
      f.unique_slots.resize(slice.rows.size());
      for (size_t u = 0; u < slice.rows.size(); ++u) {
        const data::RowId r = slice.rows[u];
        uint32_t slot;
        if (mode_ == config::Mode::kIdeal) {
          slot = static_cast<uint32_t>(table_base_[t] + r);
        } else if (auto it = hot_slot_.find(Key(t, r)); it != hot_slot_.end()) {
          slot = it->second;
        } else {
          slot = next++;
          staged.push_back({t, r, slot});
        }
        f.unique_slots[u] = slot;
      }
    }
    oracle::TakeGroups(&rows_, w, &direct_groups_[w]);
    parts_->trainers[w]->EnsureSlots(next);
    if (Status st = FetchInto(staged, {w}); !st.ok()) return st;
    report->fetched_rows += staged.size();
  }
  report->fetch_s = Since(t0);

  std::vector<const std::vector<oracle::TableFeatures>*> features(W);
  std::vector<const std::vector<oracle::BagGroup>*> groups(W);
  for (uint32_t w = 0; w < W; ++w) {
    features[w] = &direct_features_[w];
    groups[w] = &direct_groups_[w];
  }
  report->loss_sum = ComputeAll(batch, features, groups, report);

  t0 = Clock::now();
  SyncDense();
  report->dense_sync_s = Since(t0);

  // Sum every touched row's gradient over trainers in rank order.
  t0 = Clock::now();
  const uint32_t width = parts_->row_optimizer->width();
  sum_index_.clear();
  sum_keys_.clear();
  std::vector<uint32_t> resident_of;  // per sum: resident slot, or UINT32_MAX
  for (uint32_t w = 0; w < W; ++w) {
    for (uint32_t t = 0; t < T; ++t) {
      const oracle::SliceTable& slice = rows_.slice(w, t);
      const oracle::TableFeatures& f = direct_features_[w][t];
      for (size_t u = 0; u < slice.rows.size(); ++u) {
        const uint64_t key = Key(t, slice.rows[u]);
        auto [it, fresh] = sum_index_.try_emplace(key, static_cast<uint32_t>(sum_keys_.size()));
        if (fresh) {
          sum_keys_.push_back(key);
          resident_of.push_back(f.unique_slots[u] < resident_slots_ ? f.unique_slots[u] : UINT32_MAX);
          row_sums_.resize(sum_keys_.size() * width);
          StartRowSum(row_sums_.data() + size_t{it->second} * width, width);
        }
        AddToRowSum(row_sums_.data() + size_t{it->second} * width, parts_->trainers[w]->RowGrad(f.unique_slots[u]), width);
      }
    }
  }
  report->unique_rows = sum_keys_.size();
  // Resident rows: every replica applies the sum. The others: their shard.
  const uint32_t S = shards();
  std::vector<std::vector<uint32_t>> tables(S), ids(S), which(S);
  for (uint32_t i = 0; i < sum_keys_.size(); ++i) {
    const float* sum = row_sums_.data() + size_t{i} * width;
    if (resident_of[i] != UINT32_MAX) {
      for (uint32_t w = 0; w < W; ++w) parts_->trainers[w]->ApplyRow(resident_of[i], sum);
      resident_touched_[resident_of[i]] = 1;
      ++report->synced_critical;
      continue;
    }
    const uint32_t t = static_cast<uint32_t>(sum_keys_[i] >> 32);
    const data::RowId r = static_cast<data::RowId>(sum_keys_[i]);
    const uint32_t s = embedding::ShardOf(t, r, S);
    tables[s].push_back(t);
    ids[s].push_back(r);
    which[s].push_back(i);
    ++report->missed_rows;
  }
  for (uint32_t w = 0; w < W; ++w) report->written_rows += staged_[w].size();  // each trainer pushes its gradients
  for (uint32_t s = 0; s < S; ++s) {
    if (ids[s].empty()) continue;
    const auto& idx = which[s];
    Status st = parts_->shards[s]->Update(tables[s].data(), ids[s].data(), ids[s].size(), [&](float* row, size_t k) {
      parts_->row_optimizer->Apply(row, row_sums_.data() + size_t{idx[k]} * width);
    });
    if (!st.ok()) return st;
  }
  report->sparse_sync_s = Since(t0);
  return true;
}

// ---------------------------------------------------------------- end, evaluation, digest

Status LockstepRun::Finish() {
  if (planned()) {
    // The planner evicts every row after its last use and at the end of the
    // data; nothing is left in the caches once every batch has run.
    if (!location_.empty()) {
      return Status::InvalidArgument("run ended with " + std::to_string(location_.size()) +
                                     " rows still cached: Finish() before the last batch");
    }
    return Status::Ok();
  }
  return FlushHeldRows();
}

Status LockstepRun::FlushHeldRows() {
  if (planned()) {
    // Cached rows (a private one from its owner): a cached row is never
    // fetched and its eviction writes it back again, so this changes no result.
    for (const auto& [key, where] : location_) {
      const uint32_t owner = where.owner == kEveryTrainer ? 0 : where.owner;
      if (Status st = StoreFrom(owner, {{static_cast<uint32_t>(key >> 32), static_cast<data::RowId>(key), where.slot}});
          !st.ok()) {
        return st;
      }
    }
    return Status::Ok();
  }
  std::vector<oracle::RowSlot> touched;
  for (uint32_t t = 0; t < parts_->table_rows.size() && mode_ == config::Mode::kIdeal; ++t) {
    for (uint64_t r = 0; r < parts_->table_rows[t]; ++r) {
      const uint32_t slot = static_cast<uint32_t>(table_base_[t] + r);
      if (resident_touched_[slot]) touched.push_back({t, static_cast<data::RowId>(r), slot});
    }
  }
  std::vector<std::pair<uint64_t, uint32_t>> hot(hot_slot_.begin(), hot_slot_.end());
  std::sort(hot.begin(), hot.end());
  for (const auto& [key, slot] : hot) {
    if (resident_touched_[slot]) touched.push_back({static_cast<uint32_t>(key >> 32), static_cast<data::RowId>(key), slot});
  }
  return StoreFrom(0, touched);
}

Status LockstepRun::SaveCheckpoint(const std::string& dir) {
  if (Status st = FlushHeldRows(); !st.ok()) return st;
  return SaveRunCheckpoint(*parts_, dir, position_);
}

Result<std::unique_ptr<LockstepRun>> LockstepRun::Resume(const config::Config& cfg, const std::string& dir) {
  auto parts = RunParts::Create(cfg);
  if (!parts.ok()) return parts.status();
  auto position = LoadRunCheckpoint(dir, parts->get());
  if (!position.ok()) return position.status();
  return Create(std::move(parts).value(), position->next, position->batches);
}

Result<EvalReport> LockstepRun::Evaluate(uint64_t max_samples) {
  return parts_->Evaluate(max_samples, parts_->EachRow([&](uint32_t t, data::RowId r, float* out) {
    // The row's latest value: a cache or replica holding it, else its shard.
    if (ReadHeldRow(t, r, out)) return Status::Ok();
    return parts_->shards[embedding::ShardOf(t, r, shards())]->Peek(t, r, out);
  }));
}

bool LockstepRun::ReadHeldRow(uint32_t t, data::RowId r, float* out) {
  SlotArray& scorer = parts_->trainers[0]->cache();
  if (planned()) {
    if (auto it = location_.find(Key(t, r)); it != location_.end()) {
      const uint32_t owner = it->second.owner == kEveryTrainer ? 0 : it->second.owner;
      parts_->trainers[owner]->cache().ReadRow(it->second.slot, out);
      return true;
    }
  } else if (mode_ == config::Mode::kIdeal) {
    scorer.ReadRow(static_cast<uint32_t>(table_base_[t] + r), out);
    return true;
  } else if (auto it = hot_slot_.find(Key(t, r)); it != hot_slot_.end()) {
    scorer.ReadRow(it->second, out);
    return true;
  }
  return false;
}

std::span<const float> LockstepRun::dense_params(uint32_t w) const {
  return parts_->trainers[w]->model().params();
}

uint64_t LockstepRun::ParameterDigest() const { return parts_->ParameterDigest(); }

}  // namespace actorrec::trainer
