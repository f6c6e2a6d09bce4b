#include "actors/trainer/slot_array.hpp"

#include <algorithm>
#include <cstring>

namespace actorrec::trainer {
namespace {

// Rows ahead whose slot ApplyRows prefetches on the host.
constexpr size_t kAhead = 8;

gpu::RowUpdateKind KindOf(config::SparseOptimizer kind) {
  switch (kind) {
    case config::SparseOptimizer::kSgd: return gpu::RowUpdateKind::kSgd;
    case config::SparseOptimizer::kAdagrad: return gpu::RowUpdateKind::kAdagrad;
    case config::SparseOptimizer::kRowwiseAdagrad: return gpu::RowUpdateKind::kRowwiseAdagrad;
    case config::SparseOptimizer::kAdam: return gpu::RowUpdateKind::kAdam;
  }
  ACTORREC_ASSERT(false, "a sparse optimizer kind without a row update");
}

}  // namespace

gpu::RowUpdate RowUpdateOf(const models::RowOptimizer& rows) {
  gpu::RowUpdate u;
  u.kind = KindOf(rows.kind());
  u.width = rows.width();
  u.lr = rows.settings().lr;
  u.beta1 = rows.settings().beta1;
  u.beta2 = rows.settings().beta2;
  u.eps = rows.settings().eps;
  return u;
}

SlotArray::SlotArray(gpu::Backend* backend, const models::RowOptimizer* rows)
    : backend_(backend),
      optimizer_(rows),
      update_(RowUpdateOf(*rows)),
      device_(backend->device_memory()),
      row_floats_(rows->row_floats()) {}

SlotArray::~SlotArray() {
  if (staging_ != nullptr) {
    backend_->WaitStaged(UINT64_MAX);  // no copy may still read the ring
    backend_->FreePinned(staging_);
  }
  if (device_rows_ != nullptr) backend_->Free(device_rows_);
}

void SlotArray::Ensure(uint32_t slots) {
  if (slots <= slots_) return;
  const size_t old_floats = size_t{slots_} * row_floats_, floats = size_t{slots} * row_floats_;
  if (!device_) {
    host_.resize(floats);
    slots_ = slots;
    return;
  }
  // Through the host: the array grows rarely (the no-cache mode grows it to
  // its largest batch), never in the steady state.
  std::vector<float> grown(floats, 0.0f);
  if (old_floats > 0) backend_->Download(grown.data(), device_rows_, old_floats);
  float* fresh = backend_->Allocate(floats);
  backend_->Upload(fresh, grown.data(), floats);
  backend_->Free(device_rows_);
  device_rows_ = fresh;
  slots_ = slots;

  // At least the first size (or every slot, if fewer); landings grow it.
  std::lock_guard<std::mutex> lock(staging_mu_);
  ResizeStaging(std::max(staging_rows_, std::min<size_t>(slots_, kFirstStagingRows)));
}

void SlotArray::GrowStagingFor(size_t n) {
  ResizeStaging(StagingRowsFor(staging_rows_, n, std::min<size_t>(slots_, kMaxStagingRows)));
}

void SlotArray::ResizeStaging(size_t rows) {
  if (rows <= staging_rows_) return;
  if (staging_ != nullptr) {
    backend_->WaitStaged(UINT64_MAX);  // no copy may still read the old ring
    backend_->FreePinned(staging_);
    staging_ = nullptr;
  }
  const size_t ring_floats = rows * (row_floats_ + 1);
  staging_ = backend_->AllocatePinned(ring_floats);
  staging_rows_ = rows;
  ring_ = gpu::StagingRing(ring_floats);
}

float* SlotArray::host_slot(uint32_t s) {
  ACTORREC_ASSERT(!device_, "a slot's host pointer exists only where the slots are in host memory");
  return host_.data() + size_t{s} * row_floats_;
}
const float* SlotArray::host_slot(uint32_t s) const {
  ACTORREC_ASSERT(!device_, "a slot's host pointer exists only where the slots are in host memory");
  return host_.data() + size_t{s} * row_floats_;
}

SlotArray::Stage SlotArray::Reserve(size_t n) {
  const size_t floats = n * (row_floats_ + 1);
  auto span = ring_.Reserve(floats);
  ACTORREC_ASSERT(span.ok(), span.status().ToString());  // n ≤ staging_rows_ by construction
  if (span->wait_for != 0) {
    backend_->WaitStaged(span->wait_for);
    ring_.Done(span->wait_for);
  }
  Stage stage;
  stage.offset = span->offset;
  stage.floats = floats;
  stage.rows = staging_ + span->offset;
  stage.slots = reinterpret_cast<uint32_t*>(stage.rows + n * row_floats_);
  return stage;
}

void SlotArray::Scatter(const Stage& stage, size_t n, int64_t batch) {
  const uint64_t ticket = backend_->ScatterSlots(stage.rows, stage.slots, n, row_floats_, device_rows_, row_floats_);
  ring_.Commit(stage.offset, stage.floats, ticket);
  schedule_.Staged(batch, ticket);
  newest_ticket_ = std::max(newest_ticket_, ticket);
}

void SlotArray::BeforeCompute(int64_t batch) {
  if (!device_) return;
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(staging_mu_);
    ticket = schedule_.ComputeWaitsOn(batch);
    schedule_.Computed(batch);
  }
  WaitForRows(ticket);
}

void SlotArray::BeforeComputeAll() {
  if (!device_) return;
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(staging_mu_);
    ticket = newest_ticket_;
    schedule_ = gpu::CopySchedule();
  }
  WaitForRows(ticket);
}

void SlotArray::WaitForRows(uint64_t ticket) {
  backend_->BeginWait(gpu::WaitFor::kRows);
  if (ticket != 0) backend_->ComputeAfter(ticket);
  backend_->EndWait(gpu::WaitFor::kRows);
}

void SlotArray::Gather(const Stage& stage, const uint32_t* slots, size_t n) {
  std::copy_n(slots, n, stage.slots);
  backend_->GatherSlots(device_rows_, row_floats_, stage.slots, n, row_floats_, stage.rows);
}

void SlotArray::WriteRows(const uint32_t* slots, size_t n, const float* rows) {
  FillRows(slots, n, [&](size_t i, float* dst) {
    std::memcpy(dst, rows + i * row_floats_, row_floats_ * sizeof(float));
  });
}

void SlotArray::ReadRow(uint32_t slot, float* out) {
  VisitRows(&slot, 1, [&](size_t, const float* src) { std::memcpy(out, src, row_floats_ * sizeof(float)); });
}

void SlotArray::Pool(size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling, float* out, size_t out_stride) {
  if (device_) return backend_->PoolSlots(device_rows_, row_floats_, width, bags, pooling, out, out_stride);
  backend_->PoolBySlot(host_.data(), row_floats_, width, bags, pooling, out, out_stride);
}

void SlotArray::PoolResident(size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling, float* out,
                             size_t out_stride) {
  if (device_) return backend_->ResidentPoolSlots(device_rows_, row_floats_, width, bags, pooling, out, out_stride);
  backend_->PoolBySlot(host_.data(), row_floats_, width, bags, pooling, out, out_stride);
}

void SlotArray::ApplyRows(const uint32_t* slots, size_t n, const float* grads) {
  if (n == 0) return;
  if (device_) return backend_->ApplyRowUpdate(device_rows_, row_floats_, slots, n, grads, update_);
  // Each slot is a miss to memory (the cache is megabytes, the rows of a
  // sync set random in it), and the update a few instructions: the row some
  // updates ahead is asked for while this one is updated.
  const uint32_t width = optimizer_->width();
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const float* ahead = host_slot(slots[i + kAhead]);
      __builtin_prefetch(ahead, 1);
      __builtin_prefetch(ahead + row_floats_ - 1, 1);  // a row may straddle two lines
    }
    optimizer_->Apply(host_slot(slots[i]), grads + i * width);
  }
}

void SlotArray::ApplyResidentRows(const uint32_t* slots, size_t n, const float* grads) {
  if (!device_) return ApplyRows(slots, n, grads);  // the backend's memory is the host's
  if (n == 0) return;
  backend_->ApplyResidentRowUpdate(device_rows_, row_floats_, slots, n, grads, update_);
}

}  // namespace actorrec::trainer
