// SlotArray: a trainer's cache slots in its backend's memory (plain C++, no
// CAF). `slots` rows of row_floats floats, each the embedding weights then
// their optimizer state (a row travels with its state), slot-major.
//
// Where the backend's memory is the host's (the CPU backend) the array is a
// host vector and every operation works on it in place: no staging, no
// copy, the same loops as before it moved here (so the CPU path's bits, and
// the default digest, are unchanged). Where the backend has memory of its
// own (CUDA, or a test's fake device) the array lives there and:
//   FillRows   fills a span of a bounded pinned staging ring (rows, then
//              their slot numbers), one upload and one scatter by slot
//              (Backend::ScatterSlots); the span is reused only after that
//              copy's ticket (gpu/staging_ring.hpp);
//   VisitRows  gathers the slots into a span of the ring and downloads it
//              once (Backend::GatherSlots), then hands the rows out;
//   Pool       pools from the device rows (Backend::PoolSlots), into host
//              memory, or (PoolResident) into the backend's;
//   ApplyRows  runs the row optimizer on a list of slots with their summed
//              gradients on the backend (Backend::ApplyRowUpdate).
// The ring is sized from what the plans land and write back: it starts at
// min(slots, kFirstStagingRows) rows and grows (grow-only, waiting for the
// copies in flight) to twice the largest FillRows or VisitRows seen, at
// most min(slots, kMaxStagingRows) (StagingRowsFor); a write or read of more
// rows than that bound goes through it in ring-sized pieces.
//
// Threads: the trainer computes (Pool, ApplyRows) and its cache partition
// writes and reads rows (FillRows, VisitRows) from another thread, on slots
// the oracle keeps apart (slot_pool.hpp's quarantine); FillRows and
// VisitRows hold a lock of their own, so the ring is the partition's alone.
// Ensure and the lockstep driver's calls come from one thread at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/copy_schedule.hpp"
#include "gpu/staging_ring.hpp"
#include "models/optimizers.hpp"

namespace actorrec::trainer {

// The ring's bound in rows: with rows of 17 floats (16 weights + a
// row-wise Adagrad accumulator) and their slot numbers, 4.5 MiB of pinned
// memory per trainer; enough for a batch's fetch from one shard at the
// batch sizes of docs/benchmarks.md, and larger fetches go in pieces.
constexpr size_t kMaxStagingRows = size_t{1} << 16;
// The ring's first size in rows (72 KiB with those rows): what a small
// cache or a tiny batch needs; larger landings grow it.
constexpr size_t kFirstStagingRows = size_t{1} << 10;

// The ring's rows once a landing or write-back of `rows` rows is asked for:
// twice that (so the next landing fills one half while the copy of the
// other runs), at most `bound`, never fewer than `current` (grow-only).
inline size_t StagingRowsFor(size_t current, size_t rows, size_t bound) {
  return std::max(current, std::min(rows * 2, bound));
}

// The backend's form of a row optimizer.
gpu::RowUpdate RowUpdateOf(const models::RowOptimizer& rows);

class SlotArray {
 public:
  SlotArray(gpu::Backend* backend, const models::RowOptimizer* rows);
  ~SlotArray();
  SlotArray(const SlotArray&) = delete;
  SlotArray& operator=(const SlotArray&) = delete;

  uint32_t slots() const { return slots_; }
  uint32_t row_floats() const { return row_floats_; }
  // Whether the slots live in the backend's own memory (not the host's).
  bool device() const { return device_; }
  size_t staging_rows() const { return staging_rows_; }

  // Grows to at least `slots` rows, keeping every row; new rows are zero.
  void Ensure(uint32_t slots);

  // The array in the backend's memory (slot s at rows() + s·row_floats()).
  float* rows() { return device_ ? device_rows_ : host_.data(); }
  const float* rows() const { return device_ ? device_rows_ : host_.data(); }
  // Slot s on the host: only where !device() (a host backend's array).
  float* host_slot(uint32_t s);
  const float* host_slot(uint32_t s) const;

  // Writes n rows of `batch` (the batch whose compute first reads them; any
  // number for a caller that waits with BeforeComputeAll) into their slots:
  // fill(i, dst) writes row i (row_floats() floats) to dst, which is slot
  // slots[i] itself on a host backend and staging on a device.
  template <class Fill>
  void FillRows(const uint32_t* slots, size_t n, Fill&& fill, int64_t batch = 0);
  // Rows laid out one after the other (n × row_floats()).
  void WriteRows(const uint32_t* slots, size_t n, const float* rows);
  // Reads n slots: use(i, src) gets slot slots[i]'s row_floats() floats.
  template <class Use>
  void VisitRows(const uint32_t* slots, size_t n, Use&& use);
  void ReadRow(uint32_t slot, float* out);

  // Before the compute of `batch` (the trainer's thread): the backend's
  // later ops see every row written for it (gpu/copy_schedule.hpp), and
  // none of a later batch's copies is waited for.
  void BeforeCompute(int64_t batch);
  // Before compute that reads whatever was written so far (the lockstep
  // driver, evaluation).
  void BeforeComputeAll();

  // Backend::PoolSlots from this array (out on the host).
  void Pool(size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling, float* out, size_t out_stride);
  // The same with `out` in the backend's memory (Backend::ResidentPoolSlots):
  // the pooled values stay on the device.
  void PoolResident(size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling, float* out, size_t out_stride);
  // The row optimizer on slots[i] with grads + i·width, i < n (distinct
  // slots). On the host: RowOptimizer::Apply in place, in list order.
  void ApplyRows(const uint32_t* slots, size_t n, const float* grads);
  // ApplyRows with `grads` in the backend's memory
  // (Backend::ApplyResidentRowUpdate: only the slot numbers cross).
  void ApplyResidentRows(const uint32_t* slots, size_t n, const float* grads);

 private:
  // A span of the ring for n rows: rows at `rows`, slot numbers at `slots`.
  struct Stage {
    size_t offset, floats;
    float* rows;
    uint32_t* slots;
  };
  Stage Reserve(size_t n);
  // Grows the ring for a call of n rows (StagingRowsFor) or to `rows`
  // exactly (Ensure). REQUIRES: staging_mu_ held.
  void GrowStagingFor(size_t n);
  void ResizeStaging(size_t rows);
  void Scatter(const Stage& stage, size_t n, int64_t batch);
  void Gather(const Stage& stage, const uint32_t* slots, size_t n);
  void Release(const Stage& stage) { ring_.Commit(stage.offset, stage.floats, 0); }
  // ComputeAfter(ticket) (0: nothing to wait for), timed as the compute
  // stream's wait for rows (Backend::BeginWait).
  void WaitForRows(uint64_t ticket);

  gpu::Backend* backend_;
  const models::RowOptimizer* optimizer_;
  gpu::RowUpdate update_;
  bool device_;
  uint32_t row_floats_;
  uint32_t slots_ = 0;
  std::vector<float> host_;       // a host backend's array
  float* device_rows_ = nullptr;  // a device backend's array
  // The staging ring (device only) and its lock (see Threads).
  std::mutex staging_mu_;
  size_t staging_rows_ = 0;
  float* staging_ = nullptr;
  gpu::StagingRing ring_{0};
  gpu::CopySchedule schedule_;  // guarded by staging_mu_
  uint64_t newest_ticket_ = 0;  // guarded by staging_mu_
};

template <class Fill>
void SlotArray::FillRows(const uint32_t* slots, size_t n, Fill&& fill, int64_t batch) {
  if (!device_) {
    for (size_t i = 0; i < n; ++i) fill(i, host_slot(slots[i]));
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mu_);
  ACTORREC_ASSERT(n == 0 || staging_rows_ > 0, "rows written into a cache of no slots");
  GrowStagingFor(n);
  for (size_t done = 0; done < n;) {
    const size_t k = std::min(n - done, staging_rows_);
    Stage stage = Reserve(k);
    for (size_t i = 0; i < k; ++i) {
      stage.slots[i] = slots[done + i];
      fill(done + i, stage.rows + i * row_floats_);
    }
    Scatter(stage, k, batch);
    done += k;
  }
}

template <class Use>
void SlotArray::VisitRows(const uint32_t* slots, size_t n, Use&& use) {
  if (!device_) {
    for (size_t i = 0; i < n; ++i) use(i, static_cast<const float*>(host_slot(slots[i])));
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mu_);
  ACTORREC_ASSERT(n == 0 || staging_rows_ > 0, "rows read from a cache of no slots");
  GrowStagingFor(n);
  for (size_t done = 0; done < n;) {
    const size_t k = std::min(n - done, staging_rows_);
    Stage stage = Reserve(k);
    Gather(stage, slots + done, k);
    for (size_t i = 0; i < k; ++i) use(done + i, static_cast<const float*>(stage.rows + i * row_floats_));
    Release(stage);
    done += k;
  }
}

}  // namespace actorrec::trainer
