#include "actors/trainer/trainer_core.hpp"

#include <algorithm>
#include <string_view>

#include "base/digest.hpp"
#include "base/status.hpp"

namespace actorrec::trainer {
namespace {

// Rows ahead whose gradient entries PackRowGrads prefetches.
constexpr size_t kAhead = 8;

}  // namespace

gpu::SlotBags BagsOf(const oracle::TableFeatures& f) {
  gpu::SlotBags bags;
  bags.unique_slots = f.unique_slots.data();
  bags.unique_count = f.unique_slots.size();
  bags.inverse = f.inverse.data();
  bags.offsets = f.offsets.data();
  bags.samples = f.offsets.empty() ? 0 : f.offsets.size() - 1;
  return bags;
}

void PoolSlice(gpu::Backend& backend, const float* rows, size_t row_stride, uint32_t width, gpu::Pooling pooling,
               const std::vector<oracle::TableFeatures>& features, size_t samples, float* pooled) {
  const size_t stride = features.size() * width;
  for (size_t t = 0; t < features.size(); ++t) {
    gpu::SlotBags bags = BagsOf(features[t]);
    ACTORREC_ASSERT(bags.samples == samples, "a table's bags must cover the slice");
    backend.PoolBySlot(rows, row_stride, width, bags, pooling, pooled + t * width, stride);
  }
}

TrainerCore::TrainerCore(std::unique_ptr<models::Model> model, std::unique_ptr<models::DenseOptimizer> dense,
                         const models::RowOptimizer* rows, gpu::Backend* backend, gpu::Pooling pooling,
                         uint32_t tables, uint32_t slots)
    : model_(std::move(model)),
      dense_(std::move(dense)),
      row_optimizer_(rows),
      backend_(backend),
      pooling_(pooling),
      tables_(tables),
      width_(rows->width()),
      row_floats_(rows->row_floats()),
      cache_(backend, rows),
      unique_grads_(tables) {
  ACTORREC_ASSERT(model_->embedding_width() == width_, "row optimizer and model disagree on the row width");
  EnsureSlots(slots);
}

void TrainerCore::EnsureSlots(uint32_t slots) {
  if (slots <= slots_) return;
  slots_ = slots;
  cache_.Ensure(slots_);
  grad_stamp_.resize(slots_, 0);
  grad_ptr_.resize(slots_, nullptr);
  grad_row_.resize(slots_, 0);
}

void TrainerCore::KeepSumsResident(bool on) {
  sums_resident_ = on && backend_->device_memory();
  model_->KeepGradsResident(sums_resident_);
}

models::SliceView ViewOf(const data::SampleBlock& samples) {
  models::SliceView view;
  view.samples = samples.size();
  view.dense = samples.dense.data();
  view.labels = samples.labels.data();
  return view;
}

void TrainerCore::MapGroups(const std::vector<oracle::BagGroup>& groups, size_t samples) {
  bag_of_.assign(tables_, nullptr);
  for (const oracle::BagGroup& g : groups) {
    ACTORREC_ASSERT(g.bag_of.size() == samples, "a dedup group maps every sample of the slice");
    for (uint32_t t : g.tables) {
      ACTORREC_ASSERT(t < tables_ && bag_of_[t] == nullptr, "a dedup group's tables exist, in one group each");
      bag_of_[t] = &g.bag_of;
    }
  }
}

models::SliceView TrainerCore::ViewWithDense(const data::SampleBlock& samples,
                                             const std::vector<oracle::BagGroup>& groups, data::DenseDedup& dedup,
                                             std::vector<float>& rows) {
  models::SliceView view = ViewOf(samples);
  if (dense_group_.empty() || !model_->DedupsDense() || samples.num_dense == 0) return view;
  const auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const oracle::BagGroup& x) { return x.tables == dense_group_; });
  if (g == groups.end()) return view;
  const size_t n = samples.size(), width = samples.num_dense;
  dedup.Run(samples.dense.data(), n, width, g->bag_of.data());
  const std::vector<uint32_t>& first = dedup.first();
  rows.resize(first.size() * width);
  gpu::HostGatherRows(samples.dense.data(), width, width, first.data(), first.size(), rows.data(), width);
  view.dense = rows.data();
  view.dense_of = dedup.inverse().data();
  view.dense_rows = first.size();
  return view;
}

void TrainerCore::StageInputs(int64_t batch, const data::SampleBlock& samples,
                              const std::vector<oracle::BagGroup>& groups) {
  if (!cache_.device()) return;
  const std::optional<size_t> set = inputs_.FreeSet(batch);
  if (!set) return;
  InputSet& in = input_sets_[*set];
  in.view = ViewWithDense(samples, groups, in.dedup, in.dense_rows);
  const size_t n = in.view.samples;
  const size_t dense_floats = (in.view.dense_of != nullptr ? in.view.dense_rows : n) * samples.num_dense;
  in.packed.resize(dense_floats + n);
  std::copy_n(in.view.dense, dense_floats, in.packed.data());
  std::copy_n(in.view.labels, n, in.packed.data() + dense_floats);
  float* dev = in.dev.Grow(*backend_, in.packed.size());
  inputs_.Staged(batch, *set, backend_->UploadInputs(dev, in.packed.data(), in.packed.size()));
  in.view.dense_on = dev;
  in.view.labels_on = dev + dense_floats;
}

void TrainerCore::BeforeCompute(int64_t batch, const data::SampleBlock& samples,
                                const std::vector<oracle::BagGroup>& groups) {
  computing_.reset();
  if (!cache_.device()) return;
  StageInputs(batch, samples, groups);
  if (!inputs_.SetOf(batch)) return;  // no set free (never in order): the model uploads them
  backend_->ComputeAfterInputs(inputs_.ComputeWaitsOn(batch));
  computing_ = batch;
}

void TrainerCore::PoolTable(uint32_t t, const gpu::SlotBags& bags, size_t n, float* out, size_t stride) {
  if (bag_of_.empty() || bag_of_[t] == nullptr) {
    ACTORREC_ASSERT(bags.samples == n, "a table's bags must cover the slice");
    if (resident_) return cache_.PoolResident(width_, bags, pooling_, out, stride);
    return cache_.Pool(width_, bags, pooling_, out, stride);
  }
  // A group's table: each tuple once, then to every sample that uses it.
  const std::vector<uint32_t>& bag_of = *bag_of_[t];
  ACTORREC_ASSERT(bag_of.empty() || *std::max_element(bag_of.begin(), bag_of.end()) < bags.samples,
                  "a sample's tuple is one of its group's tuples");
  if (resident_) {
    // In device memory (stream order: the next table's pooling reuses the
    // tuples' buffer only after this gather).
    float* tuples = dev_tuples_.Grow(*backend_, bags.samples * width_);
    cache_.PoolResident(width_, bags, pooling_, tuples, width_);
    backend_->GatherRows(tuples, width_, width_, bag_of.data(), n, out, stride);
    return;
  }
  std::vector<float>& tuples = tuple_pooled_[t];
  tuples.resize(bags.samples * width_);
  cache_.Pool(width_, bags, pooling_, tuples.data(), width_);
  gpu::HostGatherRows(tuples.data(), width_, width_, bag_of.data(), n, out, stride);
}

void TrainerCore::Forward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features,
                          const std::vector<oracle::BagGroup>& groups) {
  ACTORREC_ASSERT(features.size() == tables_, "one TableFeatures per table");
  const size_t n = samples.size();
  const size_t pooled_floats = n * tables_ * width_;
  resident_ = PoolsResident(cache_);
  float* pooled = nullptr;
  if (resident_) {
    pooled = dev_pooled_.Grow(*backend_, pooled_floats);
  } else {
    if (pooled_.size() < pooled_floats) {
      pooled_.resize(pooled_floats);
      pooled_grad_.resize(pooled_floats);
    }
    pooled = pooled_.data();
  }
  if (groups.empty()) {
    bag_of_.clear();
  } else {
    MapGroups(groups, n);
    tuple_pooled_.resize(tables_);
  }
  const size_t stride = size_t{tables_} * width_;
  for (uint32_t t = 0; t < tables_; ++t) PoolTable(t, BagsOf(features[t]), n, pooled + size_t{t} * width_, stride);
  if (computing_) {  // its inputs went up ahead (BeforeCompute; a device only)
    view_ = input_sets_[*inputs_.SetOf(*computing_)].view;
    ACTORREC_ASSERT(view_.samples == n, "Forward takes the slice BeforeCompute staged");
  } else {
    view_ = ViewWithDense(samples, groups, dense_dedup_, dense_rows_);
  }
  view_.pooled_resident = resident_;
  model_->Forward(view_, pooled);
}

double TrainerCore::Backward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features,
                             float grad_scale, const std::vector<oracle::BagGroup>& groups) {
  ACTORREC_ASSERT(features.size() == tables_, "one TableFeatures per table");
  ACTORREC_ASSERT(resident_ == PoolsResident(cache_), "Backward follows its Forward");
  // The Forward's view: its deduplicated dense rows, if any, are these
  // samples' (the same arguments).
  ACTORREC_ASSERT(view_.samples == samples.size(), "Backward follows the Forward of its slice");
  const size_t n = samples.size();
  models::SliceView view = ViewOf(samples);
  view.dense = view_.dense;
  view.dense_of = view_.dense_of;
  view.dense_rows = view_.dense_rows;
  view.dense_on = view_.dense_on;
  view.labels_on = view_.labels_on;
  view.pooled_resident = resident_;
  const float* pooled = resident_ ? dev_pooled_.data() : pooled_.data();
  float* pooled_grad = resident_ ? dev_pooled_grad_.Grow(*backend_, n * tables_ * width_) : pooled_grad_.data();
  const double loss = model_->Backward(view, pooled, pooled_grad, grad_scale);
  if (groups.empty()) {
    bag_of_.clear();
  } else {
    MapGroups(groups, n);
  }

  if (++stamp_ == 0) {  // wrapped: forget every old stamp
    std::fill(grad_stamp_.begin(), grad_stamp_.end(), 0);
    stamp_ = 1;
  }
  const size_t stride = size_t{tables_} * width_;
  // Sums in the backend's memory: every table's unique rows after the −0 row.
  float* dev_unique = nullptr;
  size_t next_row = 1;
  if (sums_resident_) {
    // The slots are in the same backend's memory, so the pooled gradients
    // are too (PoolsResident).
    ACTORREC_ASSERT(resident_, "sums in the backend's memory pool there");
    size_t rows = 1;
    for (const oracle::TableFeatures& f : features) rows += f.unique_slots.size();
    dev_unique = dev_unique_.Grow(*backend_, rows * width_);
    if (rows > dev_unique_rows_) {  // a new buffer (Grow's rule): its −0 row
      dev_unique_rows_ = rows;
      const std::vector<float> zero(width_, -0.0f);
      backend_->Upload(dev_unique, zero.data(), width_);
    }
  }
  for (uint32_t t = 0; t < tables_; ++t) {
    const gpu::SlotBags bags = BagsOf(features[t]);
    // On the device, a dedup group's samples are summed per tuple first (in
    // ascending sample order), there; the rows' reduction reads the sums.
    const float* table_grad = pooled_grad + size_t{t} * width_;
    size_t table_stride = stride;
    if (resident_ && !bag_of_.empty() && bag_of_[t] != nullptr) {
      float* tuple_grad = dev_tuple_grad_.Grow(*backend_, bags.samples * width_);
      backend_->SumRowsByIndex(table_grad, stride, width_, bag_of_[t]->data(), n, bags.samples, tuple_grad, width_);
      table_grad = tuple_grad;
      table_stride = width_;
    }
    if (sums_resident_) {
      backend_->ResidentRowGrads(table_grad, table_stride, width_, bags, pooling_, dev_unique + next_row * width_);
      for (size_t u = 0; u < bags.unique_count; ++u) {
        const uint32_t s = bags.unique_slots[u];
        ACTORREC_ASSERT(s < slots_, "a feature slot is beyond the cache");
        grad_stamp_[s] = stamp_;
        grad_row_[s] = static_cast<uint32_t>(next_row + u);
      }
      next_row += bags.unique_count;
      continue;
    }
    std::vector<float>& grads = unique_grads_[t];
    grads.resize(bags.unique_count * width_);
    if (resident_) {  // only the unique rows' gradients come down
      backend_->ResidentBagGradToUnique(table_grad, table_stride, width_, bags, pooling_, grads.data());
    } else {
      HostRowGrads(t, pooled_grad, stride, bags, n, grads.data());
    }
    for (size_t u = 0; u < bags.unique_count; ++u) {
      const uint32_t s = bags.unique_slots[u];
      ACTORREC_ASSERT(s < slots_, "a feature slot is beyond the cache");
      grad_stamp_[s] = stamp_;
      grad_ptr_[s] = grads.data() + u * width_;
    }
  }
  // Every op that read the staged inputs ran before the downloads above
  // returned: their set is free.
  if (computing_) inputs_.Computed(*computing_);
  computing_.reset();
  return loss;
}

void TrainerCore::HostRowGrads(uint32_t t, const float* pooled_grad, size_t stride, const gpu::SlotBags& bags,
                               size_t n, float* grads) {
  if (bag_of_.empty() || bag_of_[t] == nullptr) {
    backend_->BagGradToUnique(pooled_grad + size_t{t} * width_, stride, width_, bags, pooling_, grads);
    return;
  }
  // Per tuple first (its samples in ascending order), then to rows.
  tuple_grad_.resize(bags.samples * width_);
  gpu::HostSumRowsByIndex(pooled_grad + size_t{t} * width_, stride, width_, bag_of_[t]->data(), n, bags.samples,
                           tuple_grad_.data(), width_);
  backend_->BagGradToUnique(tuple_grad_.data(), width_, width_, bags, pooling_, grads);
}

void TrainerCore::SlotsOf(std::span<const oracle::RowSlot> rows) {
  apply_slots_.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) apply_slots_[i] = rows[i].slot;
}

void TrainerCore::ApplyRows(std::span<const oracle::RowSlot> rows, const float* sums) {
  SlotsOf(rows);
  cache_.ApplyRows(apply_slots_.data(), apply_slots_.size(), sums);
}

void TrainerCore::ApplyPrivateRows(std::span<const oracle::RowSlot> rows) {
  for (const oracle::RowSlot& r : rows) ACTORREC_ASSERT(Touched(r.slot), "a private row is one its owner touched");
  if (!sums_resident_) {
    for (const oracle::RowSlot& r : rows) ApplyRow(r.slot, RowGrad(r.slot));
    return;
  }
  PackResident(false, rows, &dev_private_);
  ApplyRowsResident(rows, dev_private_.data());
}

size_t TrainerCore::PackResident(bool dense, std::span<const oracle::RowSlot> rows, gpu::Buffer* out) {
  ACTORREC_ASSERT(sums_resident_, "PackResident packs the gradients Backward kept in the backend's memory");
  const size_t P = dense ? model_->grads().size() : 0;
  const size_t n = P + rows.size() * width_;
  float* to = out->Grow(*backend_, n);
  if (P > 0) backend_->CopyResident(to, model_->resident_grads(), P);
  pack_index_.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) pack_index_[i] = Touched(rows[i].slot) ? grad_row_[rows[i].slot] : 0;
  if (!rows.empty()) {
    backend_->GatherRows(dev_unique_.data(), width_, width_, pack_index_.data(), rows.size(), to + P, width_);
  }
  return n;
}

void TrainerCore::ApplyDenseResident(const float* summed) {
  dense_sum_.resize(model_->grads().size());
  if (!dense_sum_.empty()) backend_->Download(dense_sum_.data(), summed, dense_sum_.size());
  ApplyDense(dense_sum_);
}

void TrainerCore::ApplyRowsResident(std::span<const oracle::RowSlot> rows, const float* sums) {
  SlotsOf(rows);
  cache_.ApplyResidentRows(apply_slots_.data(), apply_slots_.size(), sums);
}

const float* TrainerCore::RowGrad(uint32_t s) const {
  ACTORREC_ASSERT(!sums_resident_, "with sums in the backend's memory the row gradients are there (PackResident)");
  return Touched(s) ? grad_ptr_[s] : nullptr;
}

void TrainerCore::PackRowGrads(std::span<const oracle::RowSlot> rows, std::vector<float>* out) const {
  size_t at = out->size();
  out->resize(at + rows.size() * width_);
  // RowGrad reads two per-slot arrays at random: asked for some rows ahead.
  for (size_t i = 0; i < rows.size(); ++i, at += width_) {
    if (i + kAhead < rows.size() && rows[i + kAhead].slot < slots_) {
      __builtin_prefetch(&grad_stamp_[rows[i + kAhead].slot]);
      __builtin_prefetch(&grad_ptr_[rows[i + kAhead].slot]);
    }
    const float* g = RowGrad(rows[i].slot);
    float* to = out->data() + at;
    if (g) {
      std::copy(g, g + width_, to);
    } else {
      std::fill(to, to + width_, -0.0f);
    }
  }
}

std::span<const float> TrainerCore::dense_grads() const {
  return const_cast<models::Model&>(*model_).grads();
}

void TrainerCore::SyncStarts() { backend_->BeginWait(gpu::WaitFor::kSync); }

void TrainerCore::ApplyDense(std::span<const float> summed) {
  backend_->EndWait(gpu::WaitFor::kSync);
  dense_->Step(model_->params(), summed);
}

gpu::StreamWaits TrainerCore::TakeStreamWaits(double host_rows_s, double host_sync_s) {
  if (auto device = backend_->TakeWaits()) return *device;
  return {host_rows_s, host_sync_s, false};
}

uint64_t DenseDigest(const TrainerCore& trainer) {
  const auto params = trainer.model().params();
  return Digest64(std::string_view(reinterpret_cast<const char*>(params.data()), params.size_bytes()));
}

}  // namespace actorrec::trainer
