// TrainerCore: one trainer's work on one batch slice, as plain C++ (the
// trainer actor's functional core). The trainer owns a dense model replica
// and a cache: `slots` rows of row_floats() floats each, the embedding
// weights followed by their optimizer state (a row travels with its state),
// in its backend's memory (SlotArray: the host's on the CPU backend, the
// device's on CUDA).
//
// One batch, in order:
//   Compute()       pools each table's bags by slot, runs forward and
//                   backward, and reduces the pooled gradient to one
//                   gradient per unique slot (positions in sample order);
//   RowGrad(slot)   this slice's gradient of a row, for the sync sets;
//   ApplyRow()      the row optimizer on a slot, with the gradient summed
//                   over the trainers that touched it (rank order, done by
//                   the caller: row_sync.hpp);
//   ApplyDense()    the dense optimizer with the summed dense gradient.
// Every result depends only on the slice, the rows in the slots and the
// summed gradients: the same in every cache mode, which is what makes every
// mode bit-identical to the no-cache reference (ARCHITECTURE §3, §5).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "plan/trainer_plan.hpp"
#include "data/batches/dense_dedup.hpp"
#include "data/sample_block.hpp"
#include "gpu/backend.hpp"
#include "gpu/buffer.hpp"
#include "gpu/input_schedule.hpp"
#include "models/model.hpp"
#include "models/optimizers.hpp"
#include "actors/trainer/slot_array.hpp"

namespace actorrec::trainer {

// Pools a slice's tables from `rows` (slot-major, row_stride floats a row)
// into pooled[i · T·width + t · width + j]: the layout Model::Forward
// reads. Used for training and for evaluation.
void PoolSlice(gpu::Backend& backend, const float* rows, size_t row_stride, uint32_t width, gpu::Pooling pooling,
               const std::vector<oracle::TableFeatures>& features, size_t samples, float* pooled);

// The SlotBags view of one table's features.
gpu::SlotBags BagsOf(const oracle::TableFeatures& features);

// The model's view of a block's labels and dense features.
models::SliceView ViewOf(const data::SampleBlock& samples);

class TrainerCore {
 public:
  TrainerCore(std::unique_ptr<models::Model> model, std::unique_ptr<models::DenseOptimizer> dense,
              const models::RowOptimizer* rows, gpu::Backend* backend, gpu::Pooling pooling, uint32_t tables,
              uint32_t slots);

  uint32_t row_floats() const { return row_floats_; }
  uint32_t width() const { return width_; }
  uint32_t slots() const { return slots_; }
  // Grows the cache to at least `slots` rows (the no-cache mode stages each
  // batch's rows after the resident ones). Existing rows are kept.
  void EnsureSlots(uint32_t slots);
  // The slots: rows go in and out through it (FillRows, VisitRows), and on a
  // host backend host_slot(s) is slot s itself.
  SlotArray& cache() { return cache_; }
  const SlotArray& cache() const { return cache_; }

  // The forward pass of the slice `samples` (labels, dense) whose sparse
  // features are `features` (one per table, in table order, slots into this
  // cache): pooling by slot, then the model.
  void Forward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features) {
    Forward(samples, features, {});
  }
  // With dedup groups (the plan's bag_groups): a group's tables are pooled
  // once per distinct bag tuple of the slice and expanded to the samples
  // through bag_of (Backend::GatherRows); the pooled values are bitwise
  // those of the same bags pooled per sample.
  // With the slots in a device's memory, the pooled values are pooled into
  // the backend's memory and the model reads them there
  // (SliceView::pooled_resident); their gradients stay there too and only
  // the unique rows' gradients come down (Backward). A group's tuples are
  // pooled into the backend's memory too and expanded there (GatherRows).
  void Forward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features,
               const std::vector<oracle::BagGroup>& groups);
  // The dedup group whose tuples include the dense features (config
  // dataset.dedup_groups[…].dense; its tables, ascending; empty: none). When
  // a Forward's groups hold it and the model DedupsDense() (DLRM with a
  // bottom MLP), the slice's distinct (tuple, dense row) pairs are found
  // (data::DenseDedup) and the bottom MLP runs once per pair.
  void SetDenseGroup(std::vector<uint32_t> tables) { dense_group_ = std::move(tables); }

  // A batch's inputs ahead of its compute (with the slots on a device;
  // nothing on a host backend; docs/gpu.md "A batch's inputs go up ahead").
  // StageInputs, while an earlier batch computes: `batch`'s dense rows
  // (deduplicated with the dense group, as Forward would) and labels go up
  // in one copy on the copy stream into a free input set
  // (gpu/input_schedule.hpp); nothing when they are staged already or no
  // set is free.
  void StageInputs(int64_t batch, const data::SampleBlock& samples, const std::vector<oracle::BagGroup>& groups);
  // Right before Forward of `batch` (the same samples and groups): stages
  // its inputs now if nothing did, and makes the backend's later ops wait
  // for their copy alone (Backend::ComputeAfterInputs). Forward and
  // Backward then read them where they are; Backward frees their set.
  void BeforeCompute(int64_t batch, const data::SampleBlock& samples, const std::vector<oracle::BagGroup>& groups);

  // Right after Forward with the same arguments: the backward pass, down to
  // each touched row's gradient. grad_scale is 1 / global batch size, so
  // that the trainers' gradients sum to the gradient of the batch's mean
  // loss. Returns the sum of the slice's losses.
  double Backward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features,
                  float grad_scale) {
    return Backward(samples, features, grad_scale, {});
  }
  // With the Forward's dedup groups: a group table's pooled gradients are
  // first summed per tuple in ascending sample order
  // (Backend::SumRowsByIndex; on the device where Forward pooled there),
  // then reduced to rows over the tuples' bags.
  // The same in every cache mode; against no dedup, only the order of the
  // row gradients' sums differs.
  double Backward(const data::SampleBlock& samples, const std::vector<oracle::TableFeatures>& features,
                  float grad_scale, const std::vector<oracle::BagGroup>& groups);

  // ---- Sums in the backend's memory (docs/gpu.md "Sums in the backend's
  // memory"). The actor pipeline turns this on when its collective sums
  // buffers of the backend's memory (the shared-device and NCCL
  // collectives) and the backend's memory is a device's: from then on
  // Backward leaves this slice's row gradients and dense gradient in the
  // backend's memory only (no host copy: RowGrad, PackRowGrads and
  // dense_grads' values are not there), PackResident packs them there,
  // and the summed gradients are applied from there. No effect on a host
  // backend (the CPU's: everything stays as it was).
  void KeepSumsResident(bool on);
  bool sums_resident() const { return sums_resident_; }
  // After Backward: whether the slice touched the row in slot s.
  bool Touched(uint32_t s) const { return s < slots_ && grad_stamp_[s] == stamp_; }
  // After Backward: the row optimizer on each of `rows` (every one Touched)
  // with this slice's own gradient: the private rows, which no other
  // trainer updates.
  void ApplyPrivateRows(std::span<const oracle::RowSlot> rows);
  // After Backward, with sums_resident(): into `out` (grown, the backend's
  // memory), the dense gradient (when `dense`) then each of `rows`'
  // gradient, −0.0f for a row this slice did not touch: PackRowGrads'
  // layout, packed on the backend (CopyResident, GatherRows). Returns the
  // floats packed.
  size_t PackResident(bool dense, std::span<const oracle::RowSlot> rows, gpu::Buffer* out);
  // ApplyDense and ApplyRows with the sums in the backend's memory (the
  // dense part comes down for the host's optimizer step).
  void ApplyDenseResident(const float* summed);
  void ApplyRowsResident(std::span<const oracle::RowSlot> rows, const float* sums);

  // After Backward (not with sums_resident()): this slice's gradient of the
  // row in slot s (width() floats), or nullptr when the slice did not touch it.
  const float* RowGrad(uint32_t s) const;
  // After Backward: RowGrad of each of `rows` appended to *out, −0.0f for a
  // row this slice did not touch (the identity of the rank-order sum,
  // row_sync.hpp).
  void PackRowGrads(std::span<const oracle::RowSlot> rows, std::vector<float>* out) const;

  // The row optimizer on slot s with `grad` (width() floats).
  void ApplyRow(uint32_t s, const float* grad) { cache_.ApplyRows(&s, 1, grad); }
  // ApplyRow for each of `rows` with the gradient sums + i·width(): the sync
  // sets' rows in plan order, whose slots lie all over the cache.
  void ApplyRows(std::span<const oracle::RowSlot> rows, const float* sums);

  // After Backward: this slice's dense gradient (the model's grads()).
  std::span<const float> dense_grads() const;
  // When this slice's gradients go to be summed (after Backward and the
  // private rows' updates): the compute stream has nothing to do until
  // ApplyDense, its wait for sync (TakeStreamWaits).
  void SyncStarts();
  // The dense optimizer step with the gradient summed over all trainers.
  void ApplyDense(std::span<const float> summed);

  // After ApplyDense: how long the compute stream waited since the last
  // call, for rows (SlotArray's ComputeAfter) and for the sync (SyncStarts
  // to ApplyDense), by the device's clock where the backend has one
  // (Backend::TakeWaits), else the host's figures the driver passes.
  gpu::StreamWaits TakeStreamWaits(double host_rows_s, double host_sync_s);

  models::Model& model() { return *model_; }
  const models::Model& model() const { return *model_; }
  models::DenseOptimizer& dense_optimizer() { return *dense_; }
  gpu::Backend& backend() { return *backend_; }
  gpu::Pooling pooling() const { return pooling_; }

 private:
  std::unique_ptr<models::Model> model_;
  std::unique_ptr<models::DenseOptimizer> dense_;
  const models::RowOptimizer* row_optimizer_;
  gpu::Backend* backend_;
  gpu::Pooling pooling_;
  uint32_t tables_;
  uint32_t width_;
  uint32_t row_floats_;
  uint32_t slots_ = 0;
  SlotArray cache_;
  std::vector<uint32_t> apply_slots_;  // ApplyRows' slot list, kept for its capacity
  void SlotsOf(std::span<const oracle::RowSlot> rows);  // into apply_slots_
  // Table t's unique rows' gradients on the host, from pooled_grad in host
  // memory (through its dedup group's tuples when it has one).
  void HostRowGrads(uint32_t t, const float* pooled_grad, size_t stride, const gpu::SlotBags& bags, size_t n,
                    float* grads);

  // Sums in the backend's memory: the last Backward's unique rows'
  // gradients, every table's after one row of −0.0f (row 0, what an
  // untouched row packs), in dev_unique_ (dev_unique_rows_ rows allocated,
  // row 0 written when it grew); slot s's at row grad_row_[s].
  bool sums_resident_ = false;
  gpu::Buffer dev_unique_, dev_private_;
  size_t dev_unique_rows_ = 0;
  std::vector<uint32_t> grad_row_, pack_index_;
  std::vector<float> dense_sum_;  // ApplyDenseResident's download

  // Whether the last Forward pooled into the backend's memory (a device
  // cache, with or without dedup groups): its pooled values and their
  // gradients stay in dev_pooled_ / dev_pooled_grad_, a group's tuples and
  // their summed gradients in dev_tuples_ / dev_tuple_grad_ (one table's
  // at a time: stream order keeps the next table's out), never on the host.
  bool resident_ = false;
  static bool PoolsResident(const SlotArray& cache) { return cache.device(); }

  // Scratch, kept between batches.
  std::vector<float> pooled_;
  std::vector<float> pooled_grad_;
  gpu::Buffer dev_pooled_, dev_pooled_grad_, dev_tuples_, dev_tuple_grad_;
  std::vector<std::vector<float>> unique_grads_;  // per table: U × width
  // Dedup groups: per table, the group's bag_of (null: not in a group, set
  // by the last Forward), its tuples pooled (U × width) and their summed
  // gradients.
  void MapGroups(const std::vector<oracle::BagGroup>& groups, size_t samples);
  // Pools table t of the slice into out (out_stride apart; the backend's
  // memory when resident_): per sample, or a group's tuples once, then
  // expanded to the samples (GatherRows).
  void PoolTable(uint32_t t, const gpu::SlotBags& bags, size_t n, float* out, size_t out_stride);
  std::vector<const std::vector<uint32_t>*> bag_of_;
  // The dense group (SetDenseGroup), and the view the last Forward gave
  // the model (its dense rows deduplicated when the dense group was there).
  models::SliceView ViewWithDense(const data::SampleBlock& samples, const std::vector<oracle::BagGroup>& groups,
                                  data::DenseDedup& dedup, std::vector<float>& rows);
  std::vector<uint32_t> dense_group_;
  data::DenseDedup dense_dedup_;
  std::vector<float> dense_rows_;
  models::SliceView view_;
  // The inputs uploaded ahead (StageInputs): per set, its view (with
  // dense_on and labels_on in `dev`) and the host data it points to; the
  // batch whose staged inputs the current Forward and Backward read.
  struct InputSet {
    data::DenseDedup dedup;
    std::vector<float> dense_rows, packed;
    gpu::Buffer dev;
    models::SliceView view;
  };
  gpu::InputSchedule inputs_;
  std::array<InputSet, gpu::InputSchedule::kSets> input_sets_;
  std::optional<int64_t> computing_;
  std::vector<std::vector<float>> tuple_pooled_;
  std::vector<float> tuple_grad_;
  // grad_stamp_[s] == stamp_: slot s was touched by the last Compute, and
  // its gradient is at grad_ptr_[s].
  std::vector<uint32_t> grad_stamp_;
  std::vector<const float*> grad_ptr_;
  uint32_t stamp_ = 0;
};

// A trainer's dense parameters, hashed.
uint64_t DenseDigest(const TrainerCore& trainer);

}  // namespace actorrec::trainer
