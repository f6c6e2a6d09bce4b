// A fake device backend for the trainer's cache slots (SlotArray) on the
// host, in the pattern of tests/models/device_resident_test.cpp: memory of
// its own (device_memory() true) that is host memory underneath, the CPU
// backend's arithmetic, and checks that every slot op gets the right kind
// of pointer (rows in its memory, staging in its pinned memory, bags and
// gradients on the host; GatherRows' and SumRowsByIndex's values in its
// memory, their index on the host) and that no host-pointer op
// (PoolBySlot, Gemm) ever gets the device's rows.
//
// ScatterSlots copies late, as a device's copy stream would: the copy is
// queued and lands only at WaitStaged or ComputeAfter of its ticket, or at
// a later op on the copy stream (Upload, Download, GatherSlots; CUDA's
// compute stream waits for an Upload). PoolSlots and ApplyRowUpdate (the
// compute stream) land nothing. UploadInputs (a batch's inputs ahead)
// copies late too: it lands only at ComputeAfterInputs of its ticket. A caller that rewrites its staging before
// WaitStaged, or computes without ComputeAfter, therefore sees the wrong
// rows, and a run on this backend stops equalling the CPU's.
//
// Its clock (BeginWait/EndWait/TakeWaits) is fake: every completed wait
// for rows lasts kFakeRowsWait and every wait for sync kFakeSyncWait, so a
// test can tell the device's figures from the host's; ComputeAfter outside
// a wait for rows and an EndWait without its BeginWait are errors.
//
// Thread-safe: a trainer and its cache partition call it from two threads.
#pragma once

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/backend_select.hpp"

namespace actorrec::trainer {

// What a fake saw; it outlives the fake (a run's parts own their backends).
// The fake clock's waits, in seconds (powers of two: their sums are exact).
constexpr double kFakeRowsWait = 1.0 / 1024, kFakeSyncWait = 1.0 / 256;

struct FakeDeviceStats {
  std::atomic<int> uploads{0}, downloads{0}, scatters{0}, gathers{0}, row_updates{0};
  // Pooling into host memory and its backward from host memory (the staged
  // path: PoolSlots, BagGradToUnique) against the resident one
  // (ResidentPoolSlots, ResidentBagGradToUnique).
  std::atomic<int> host_pools{0}, host_bag_grads{0}, resident_pools{0}, resident_bag_grads{0};
  // The dedup groups' two ops (GatherRows, SumRowsByIndex), on the fake's
  // memory: the trainer's tuples expanded and their gradients summed, and
  // DLRM's bottom MLP per distinct dense row.
  std::atomic<int> gather_rows{0}, sums_by_index{0};
  // A batch's inputs uploaded ahead (UploadInputs), and the compute's waits
  // for them (ComputeAfterInputs); of those waits, the ones whose upload
  // was issued before an earlier batch's compute ended (a Download, which
  // waits for the compute so far, came between the upload and the wait).
  std::atomic<int> input_uploads{0}, input_waits{0}, inputs_ahead{0};
  std::atomic<int> rows_waits{0}, sync_waits{0};  // completed BeginWait/EndWait pairs
  // Sums in the backend's memory: unique rows' gradients computed into it
  // (ResidentRowGrads), row updates reading it (ApplyResidentRowUpdate),
  // rank-order sums into it (RankOrderSum: the shared-device collective).
  std::atomic<int> resident_row_grads{0}, resident_row_updates{0}, rank_sums{0};
  std::mutex mu;
  std::vector<std::string> errors;  // guarded by mu
};

class FakeDeviceBackend final : public gpu::Backend {
 public:
  explicit FakeDeviceBackend(std::shared_ptr<FakeDeviceStats> stats = std::make_shared<FakeDeviceStats>())
      : stats_(std::move(stats)) {}
  FakeDeviceStats& stats() { return *stats_; }

  std::string name() const override { return "fake device (host memory)"; }
  bool device_memory() const override { return true; }

  float* Allocate(size_t floats) override { return Track(&device_, floats); }
  void Free(float* p) override { Untrack(&device_, p, "Free"); }
  float* AllocatePinned(size_t floats) override { return Track(&pinned_, floats); }
  void FreePinned(float* p) override { Untrack(&pinned_, p, "FreePinned"); }

  void Upload(float* dst, const float* host, size_t floats) override {
    Flush();
    Check(&device_, dst, floats, true, "Upload dst");
    Check(&device_, host, 1, false, "Upload src");
    ++stats_->uploads;
    if (floats > 0) std::memcpy(dst, host, floats * sizeof(float));
  }
  void Download(float* host, const float* src, size_t floats) override {
    Flush();
    Check(&device_, src, floats, true, "Download src");
    Check(&device_, host, 1, false, "Download dst");
    ++stats_->downloads;
    if (floats > 0) std::memcpy(host, src, floats * sizeof(float));
  }

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    cpu_->Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void PoolBySlot(const float* rows, size_t row_stride, size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling,
                  float* out, size_t out_stride) override {
    Check(&device_, rows, 1, false, "PoolBySlot rows (host pointers only)");
    cpu_->PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  void BagGradToUnique(const float* g, size_t in_stride, size_t width, const gpu::SlotBags& bags,
                       gpu::Pooling pooling, float* out) override {
    Check(&device_, g, 1, false, "BagGradToUnique pooled_grad (host pointers only)");
    Check(&device_, out, 1, false, "BagGradToUnique out (host pointers only)");
    ++stats_->host_bag_grads;
    cpu_->BagGradToUnique(g, in_stride, width, bags, pooling, out);
  }
  void ResidentBagGradToUnique(const float* g, size_t in_stride, size_t width, const gpu::SlotBags& bags,
                               gpu::Pooling pooling, float* out) override {
    Check(&device_, g, bags.samples == 0 ? 0 : (bags.samples - 1) * in_stride + width, true,
          "ResidentBagGradToUnique pooled_grad");
    Check(&device_, out, 1, false, "ResidentBagGradToUnique out");
    ++stats_->resident_bag_grads;
    cpu_->BagGradToUnique(g, in_stride, width, bags, pooling, out);
  }

  // Values and their results in the fake's memory, the index on the host.
  void GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n, float* out,
                  size_t out_stride) override {
    Check(&device_, src, 1, true, "GatherRows src");
    Check(&device_, out, n == 0 ? 0 : (n - 1) * out_stride + width, true, "GatherRows out");
    Check(&device_, reinterpret_cast<const float*>(index), 1, false, "GatherRows index");
    ++stats_->gather_rows;
    gpu::Backend::GatherRows(src, src_stride, width, index, n, out, out_stride);
  }
  void SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                      size_t groups, float* out, size_t out_stride) override {
    Check(&device_, in, n == 0 ? 0 : (n - 1) * in_stride + width, true, "SumRowsByIndex in");
    Check(&device_, out, groups == 0 ? 0 : (groups - 1) * out_stride + width, true, "SumRowsByIndex out");
    Check(&device_, reinterpret_cast<const float*>(index), 1, false, "SumRowsByIndex index");
    ++stats_->sums_by_index;
    gpu::Backend::SumRowsByIndex(in, in_stride, width, index, n, groups, out, out_stride);
  }

  uint64_t ScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                        size_t row_stride) override {
    Check(&pinned_, staged, n * row_floats, true, "ScatterSlots staged");
    Check(&pinned_, reinterpret_cast<const float*>(slots), n, true, "ScatterSlots slots");
    Check(&device_, rows, 1, true, "ScatterSlots rows");
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_->scatters;
    pending_.push_back({staged, slots, n, row_floats, rows, row_stride, ++ticket_});
    return ticket_;
  }
  void GatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n, size_t row_floats,
                   float* staged) override {
    Flush();
    Check(&pinned_, staged, n * row_floats, true, "GatherSlots staged");
    Check(&device_, rows, 1, true, "GatherSlots rows");
    ++stats_->gathers;
    gpu::Backend::GatherSlots(rows, row_stride, slots, n, row_floats, staged);
  }
  void WaitStaged(uint64_t ticket) override { Flush(ticket); }
  // The inputs' copies land only at ComputeAfterInputs of their ticket (or
  // a later one): a compute that does not wait for them reads whatever the
  // set held before (an earlier batch's inputs, or fresh memory), so the
  // bits differ.
  uint64_t UploadInputs(float* dst, const float* host, size_t floats) override {
    Check(&device_, dst, floats, true, "UploadInputs dst");
    Check(&device_, host, 1, false, "UploadInputs src");
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_->input_uploads;
    inputs_pending_.push_back({dst, std::vector<float>(host, host + floats), ++input_ticket_,
                               stats_->downloads.load()});
    return input_ticket_;
  }
  void ComputeAfterInputs(uint64_t ticket) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_->input_waits;
    while (!inputs_pending_.empty() && inputs_pending_.front().ticket <= ticket) {
      const InputCopy& c = inputs_pending_.front();
      if (c.ticket == ticket && stats_->downloads.load() > c.downloads_before) ++stats_->inputs_ahead;
      std::copy(c.data.begin(), c.data.end(), c.dst);
      inputs_pending_.erase(inputs_pending_.begin());
    }
  }
  void ComputeAfter(uint64_t ticket) override {
    if (!open_[0]) Error("ComputeAfter outside a wait for rows (BeginWait)");
    Flush(ticket);
  }
  void BeginWait(gpu::WaitFor what) override { open_[static_cast<size_t>(what)] = true; }
  void EndWait(gpu::WaitFor what) override {
    const bool rows = what == gpu::WaitFor::kRows;
    if (!open_[rows ? 0 : 1]) return Error("EndWait without its BeginWait");
    open_[rows ? 0 : 1] = false;
    (rows ? taken_.rows_s : taken_.sync_s) += rows ? kFakeRowsWait : kFakeSyncWait;
    ++(rows ? stats_->rows_waits : stats_->sync_waits);
  }
  std::optional<gpu::StreamWaits> TakeWaits() override {
    gpu::StreamWaits waits = taken_;
    waits.on_device = true;
    taken_ = {};
    return waits;
  }
  void PoolSlots(const float* rows, size_t row_stride, size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling,
                 float* out, size_t out_stride) override {
    Check(&device_, rows, 1, true, "PoolSlots rows");
    Check(&device_, out, 1, false, "PoolSlots out");
    ++stats_->host_pools;
    cpu_->PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  void ResidentPoolSlots(const float* rows, size_t row_stride, size_t width, const gpu::SlotBags& bags,
                         gpu::Pooling pooling, float* out, size_t out_stride) override {
    Check(&device_, rows, 1, true, "ResidentPoolSlots rows");
    Check(&device_, out, bags.samples == 0 ? 0 : (bags.samples - 1) * out_stride + width, true,
          "ResidentPoolSlots out");
    ++stats_->resident_pools;
    cpu_->PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  void ResidentRowGrads(const float* g, size_t in_stride, size_t width, const gpu::SlotBags& bags,
                        gpu::Pooling pooling, float* out) override {
    Check(&device_, g, bags.samples == 0 ? 0 : (bags.samples - 1) * in_stride + width, true,
          "ResidentRowGrads pooled_grad");
    Check(&device_, out, bags.unique_count * width, true, "ResidentRowGrads out");
    ++stats_->resident_row_grads;
    cpu_->BagGradToUnique(g, in_stride, width, bags, pooling, out);
  }
  void ApplyResidentRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                              const gpu::RowUpdate& update) override {
    Check(&device_, rows, 1, true, "ApplyResidentRowUpdate rows");
    Check(&device_, grads, n * update.width, true, "ApplyResidentRowUpdate grads");
    ++stats_->resident_row_updates;
    gpu::Backend::ApplyRowUpdate(rows, row_stride, slots, n, grads, update);
  }
  void ApplyRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                      const gpu::RowUpdate& update) override {
    Check(&device_, rows, 1, true, "ApplyRowUpdate rows");
    Check(&device_, grads, 1, false, "ApplyRowUpdate grads");
    ++stats_->row_updates;
    gpu::Backend::ApplyRowUpdate(rows, row_stride, slots, n, grads, update);
  }

  // Sums of trainers sharing one device: the destination in this fake's
  // memory, the source in some fake's (another rank's, in the
  // shared-device collective).
  void CopyResident(float* dst, const float* src, size_t floats) override {
    Check(&device_, dst, floats, true, "CopyResident dst");
    if (floats > 0 && !InSomeFake(src, floats)) Error("CopyResident src: not in any fake's memory");
    gpu::Backend::CopyResident(dst, src, floats);
  }
  void RankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out) override {
    Check(&device_, gathered, n * ranks, true, "RankOrderSum gathered");
    Check(&device_, out, n, true, "RankOrderSum out");
    ++stats_->rank_sums;
    gpu::Backend::RankOrderSum(gathered, n, ranks, out);
  }

  std::vector<std::string> errors() const {
    std::lock_guard<std::mutex> lock(stats_->mu);
    return stats_->errors;
  }
  size_t live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return device_.size() + pinned_.size();
  }
 private:
  struct Copy {
    const float* staged;
    const uint32_t* slots;
    size_t n, row_floats;
    float* rows;
    size_t row_stride;
    uint64_t ticket;
  };
  struct InputCopy {
    float* dst;
    std::vector<float> data;
    uint64_t ticket;
    int downloads_before;  // the Downloads issued before it
  };
  using Memory = std::map<const float*, size_t>;

  float* Track(Memory* memory, size_t floats) {
    float* p = new float[floats == 0 ? 1 : floats];
    std::lock_guard<std::mutex> lock(mu_);
    (*memory)[p] = floats;
    if (memory == &device_) {
      std::lock_guard<std::mutex> all(AllMutex());
      AllDevice()[p] = floats;
    }
    return p;
  }
  void Untrack(Memory* memory, float* p, const char* what) {
    if (p == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (memory->erase(p) == 0) Error(std::string(what) + " of memory not allocated there");
      if (memory == &device_) {
        std::lock_guard<std::mutex> all(AllMutex());
        AllDevice().erase(p);
      }
    }
    delete[] p;
  }
  // Every fake's device memory in this process (the ranks of a
  // shared-device collective read each other's).
  static Memory& AllDevice() {
    static Memory all;
    return all;
  }
  static std::mutex& AllMutex() {
    static std::mutex mu;
    return mu;
  }
  static bool InSomeFake(const float* p, size_t floats) {
    std::lock_guard<std::mutex> lock(AllMutex());
    auto it = AllDevice().upper_bound(p);
    if (it == AllDevice().begin()) return false;
    --it;
    return p >= it->first && p + floats <= it->first + it->second;
  }
  // Whether [p, p + floats) lies in one allocation of `memory` (inside) or
  // outside all of them (!inside); else an error naming `what`.
  void Check(const Memory* memory, const void* p, size_t floats, bool inside, const char* what) {
    if (p == nullptr || floats == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    const float* f = static_cast<const float*>(p);
    auto it = memory->upper_bound(f);
    bool in = false;
    if (it != memory->begin()) {
      --it;
      in = f >= it->first && f + (inside ? floats : 1) <= it->first + it->second;
    }
    if (in != inside) Error(std::string(what) + (inside ? ": not in " : ": in ") + "the fake's memory");
  }
  // Lands every queued copy up to `ticket`, in order.
  void Flush(uint64_t ticket = UINT64_MAX) {
    std::lock_guard<std::mutex> lock(mu_);
    while (!pending_.empty() && pending_.front().ticket <= ticket) {
      const Copy c = pending_.front();
      pending_.erase(pending_.begin());
      for (size_t i = 0; i < c.n; ++i) {
        std::memcpy(c.rows + size_t{c.slots[i]} * c.row_stride, c.staged + i * c.row_floats,
                    c.row_floats * sizeof(float));
      }
    }
  }

  void Error(std::string what) {
    std::lock_guard<std::mutex> lock(stats_->mu);
    stats_->errors.push_back(std::move(what));
  }

  std::shared_ptr<FakeDeviceStats> stats_;
  std::unique_ptr<gpu::Backend> cpu_ = gpu::MakeCpuBackend();
  mutable std::mutex mu_;
  Memory device_, pinned_;
  std::vector<Copy> pending_;
  uint64_t ticket_ = 0;
  std::vector<InputCopy> inputs_pending_;
  uint64_t input_ticket_ = 0;
  // The fake clock (the trainer's thread only, as a compute stream's).
  bool open_[2] = {false, false};
  gpu::StreamWaits taken_;
};

// While alive, every backend a run makes (gpu::SetBackendFactoryForTests)
// is a fake device; what each saw stays here after the run has freed it.
struct FakeDevices {
  FakeDevices() {
    gpu::SetBackendFactoryForTests([this]() -> std::unique_ptr<gpu::Backend> {
      made.push_back(std::make_shared<FakeDeviceStats>());
      return std::make_unique<FakeDeviceBackend>(made.back());
    });
  }
  ~FakeDevices() { gpu::SetBackendFactoryForTests({}); }
  FakeDevices(const FakeDevices&) = delete;
  FakeDevices& operator=(const FakeDevices&) = delete;
  std::vector<std::shared_ptr<FakeDeviceStats>> made;
};

}  // namespace actorrec::trainer
