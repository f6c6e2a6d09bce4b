// The compute backend: the few kernels training needs, behind one interface
// so that the CPU implementation (BLAS + vectorized loops) and the CUDA one
// (cuBLAS + kernels, a later issue) are interchangeable (ARCHITECTURE §5).
//
// Determinism: every kernel's result depends only on its inputs, never on
// threads or timing. Sums over a bag or over a row's uses run in ascending
// position order, so a row's gradient adds its samples' contributions in
// sample order, in every cache mode (ARCHITECTURE §5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace actorrec::gpu {

enum class Pooling { kSum, kMean };

// One table of a trainer's slice, deduplicated and translated to slots (the
// view of an oracle::TableFeatures): sample i pools
// rows[unique_slots[inverse[p]]] for p in [offsets[i], offsets[i + 1]).
struct SlotBags {
  const uint32_t* unique_slots = nullptr;
  size_t unique_count = 0;
  const uint32_t* inverse = nullptr;
  const uint32_t* offsets = nullptr;  // samples + 1 entries, offsets[0] == 0
  size_t samples = 0;
};

// What a trainer's compute stream waited for in one batch, in seconds: the
// batch's rows (their copies into its slots: SlotArray's ComputeAfter) and
// the dense + critical sync (from the end of its backward to the summed
// gradient's step: TrainerCore). on_device: timed by the device's clock
// (Backend::TakeWaits); else by the host's, as the drivers time a batch.
struct StreamWaits {
  double rows_s = 0, sync_s = 0;
  bool on_device = false;
};
enum class WaitFor { kRows, kSync };

// A row optimizer as the backend runs it (models::RowOptimizer's kind and
// settings; models/optimizers.hpp states the formulas and the state layout).
enum class RowUpdateKind : uint8_t { kSgd, kAdagrad, kRowwiseAdagrad, kAdam };
struct RowUpdate {
  RowUpdateKind kind = RowUpdateKind::kSgd;
  uint32_t width = 0;  // weights per row; the state follows them
  float lr = 0.0f, beta1 = 0.0f, beta2 = 0.0f, eps = 0.0f;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Row-major C = alpha · op(A) · op(B) + beta · C, op(X) = X or Xᵀ; A is
  // m×k after op, B is k×n after op. Same contract as cblas_sgemm(RowMajor).
  virtual void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) = 0;

  // Pooled lookup by slot: for each sample i,
  //   out[i·out_stride + j] = Σ_{p = offsets[i]}^{offsets[i+1]−1} rows[unique_slots[inverse[p]]·row_stride + j]
  // for j < width, summed in ascending p; kMean multiplies the sum by 1/len
  // (as float); an empty bag gives zeros.
  virtual void PoolBySlot(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                          float* out, size_t out_stride) = 0;

  // The backward of PoolBySlot, reduced per unique row: for each u <
  // unique_count,
  //   grad_unique[u·width + j] = Σ_{p : inverse[p] = u, ascending} g(i(p))[j]
  // where i(p) is the sample whose bag holds p and g(i) =
  // pooled_grad[i·in_stride …] (kMean: times 1/len of that bag, as float).
  // A unique row no position uses gets −0.0f (the additive identity: −0 + x == x bitwise).
  virtual void BagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                               Pooling pooling, float* grad_unique) = 0;

  // ---- The backend's memory, and the model's ops on it (docs/gpu.md)
  //
  // A model that runs device-resident (models::RunsDeviceResident) keeps its
  // activations, gradients and its parameters' working copy in buffers of
  // the backend's memory (gpu/buffer.hpp) and computes with the ops below,
  // whose every pointer is in that memory. The CPU backend's memory is the
  // host's: these defaults, the models' host loops (gpu/cpu_ops.hpp), each
  // op's bits exactly what they were before the interface had it. A backend
  // with memory of its own (CUDA) overrides every one of them.
  //
  // Ordering: the ops of one backend run in call order; Download returns
  // when its copy is on the host, and so sees every op called before it.

  // Whether the memory below is the backend's own (a device's), not the host's.
  virtual bool device_memory() const { return false; }
  // `floats` of uninitialized memory (throws when there is none); Free(null)
  // does nothing.
  virtual float* Allocate(size_t floats);
  virtual void Free(float* p);
  // host → backend memory; backend memory → host (waits for the copy).
  virtual void Upload(float* dst, const float* host, size_t floats);
  virtual void Download(float* host, const float* src, size_t floats);

  // Gemm (same contract) on the backend's memory.
  virtual void ResidentGemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc) {
    Gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  // out = max(out + bias, 0) (relu) or out + bias, per row of `width`
  // (n rows).
  virtual void BiasAdd(float* out, const float* bias, size_t n, int width, bool relu);
  // gk = go where out > 0, else 0 (count elements; three distinct buffers).
  virtual void ReluGrad(const float* go, const float* out, float* gk, size_t count);
  // db[j] = Σ_i g[i·width + j], samples in order from +0.
  virtual void BiasGrad(const float* g, size_t n, int width, float* db);
  // dlogit_i = scale · (σ(z_i) − y_i); returns Σ_i BCEWithLogits(z_i, y_i),
  // summed in double in i order on the host (gpu/cpu_ops.hpp's formula).
  virtual double BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit);
  // DLRM's interaction (gpu/cpu_ops.hpp states each sum's order): r (n ×
  // width) from z (n × d, null without dense features) and pooled (n × T × d).
  virtual void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width,
                                  float* r);
  // Its backward: dz (n × d; null with z) and dpooled (n × T × d) from dr.
  virtual void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                                   size_t width, float* dz, float* dpooled);
  // Wide&Deep and DeepFM (gpu/cpu_ops.hpp states each sum's order): the
  // deep tower's input x (n × (dd + T·d)) from dense (n × dd) and pooled
  // (n × (T + C) × w: w = d + 1 for Wide&Deep and DeepFM, d for DCN's x0;
  // the C wide-only tables, Wide&Deep's crosses, after the T, never in x);
  // the logits (bias: one float of the backend's memory; fm: sums, n × d,
  // kept for the backward; the first-order sum over all T + C); the pooled
  // gradient (n × (T + C) × w).
  virtual void DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d,
                         size_t w, float* x);
  virtual void WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                              const float* bias, bool fm, float* sums, float* logits);
  virtual void WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit,
                                  size_t n, size_t dd, size_t T, size_t C, size_t d, float* pooled_grad);

  // ---- Deep&Cross (models/dcn.cpp; gpu/cpu_ops.hpp states each sum's
  // order). Rows of d0 floats; x0 is DeepInput with w = d. Scratch the ops
  // need (the cross backward's per-sample Dot(g, x0)) is the backend's own.
  //
  // One cross layer: s[i] = Dot(x_i, w) (kept for the backward), next_i =
  // x0_i·s[i] + b + x_i.
  virtual void CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0,
                            float* s, float* next);
  // logits[i] = Dot(fw, xl_i) (+ Dot(fw[d0 …], h_i) when hw > 0) + fb[0]
  // (fb: one float of the backend's memory; h null when hw = 0).
  virtual void DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0,
                         size_t hw, float* logits);
  // The final layer's backward: gfw (d0 + hw) and gfb (1) as sums over the
  // samples in order from +0, g = ∂/∂x_L (n × d0), dh = ∂/∂h (n × hw).
  virtual void DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n,
                                size_t d0, size_t hw, float* gfw, float* gfb, float* g, float* dh);
  // One cross layer's backward, the layers from the last: gw and gb (d0
  // each) from g as it comes in, then dx0 += g·s and g += Dot(g, x0)·w (g
  // leaves as ∂/∂x_l).
  virtual void CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0,
                             float* g, float* dx0, float* gw, float* gb);
  // pooled_grad (n × (d0 − dd)) = g + dx0 past the dd dense columns.
  virtual void DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad);
  // floats of +0.0f (all bits zero) at p.
  virtual void SetZero(float* p, size_t floats);

  // ---- Sums of trainers that share one device (gpu/shared_device_collective.hpp).
  //
  // dst[i] = src[i], i < floats: both in device memory of this process's
  // device, src possibly another backend's (trainers sharing one GPU), after
  // every op called before it.
  virtual void CopyResident(float* dst, const float* src, size_t floats);
  // out[i] = ((g[i] + g[n + i]) + g[2n + i]) + … + g[(ranks − 1)·n + i]
  // for i < n, in exactly that order from g[i] (collectives.hpp's rank
  // order; gpu/cuda/rank_sum_ops.hpp). out must not overlap gathered.
  virtual void RankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out);
  // Returns once every op called before it is done (so another backend's
  // ops may read what they wrote). Default: nothing (the host's ops are
  // done when they return).
  virtual void Finish() {}

  // ---- A trainer's gradients kept in the backend's memory and summed
  // there (docs/gpu.md "Sums in the backend's memory"): the unique rows'
  // gradients computed into it, packed for the sync with GatherRows (below)
  // and CopyResident, summed by a collective's AllReduceResident, and the
  // row optimizer reading the sums where they are.
  //
  // ResidentBagGradToUnique (same contract) with grad_unique in the
  // backend's memory too: only the bags' CSR crosses. Default:
  // BagGradToUnique (the host's memory).
  virtual void ResidentRowGrads(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                                Pooling pooling, float* grad_unique) {
    BagGradToUnique(pooled_grad, in_stride, width, bags, pooling, grad_unique);
  }
  // ApplyRowUpdate (same contract) with `grads` in the backend's memory:
  // only the slot numbers cross. `grads` may be reused once a later op of
  // this backend has run (stream order). Default: ApplyRowUpdate.
  virtual void ApplyResidentRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n,
                                      const float* grads, const RowUpdate& update) {
    ApplyRowUpdate(rows, row_stride, slots, n, grads, update);
  }

  // The two ops of deduplicated compute (RecD's IKJT): values computed
  // once per distinct tuple (DLRM's bottom MLP over a group's distinct
  // dense rows) are expanded to the samples with GatherRows, and the
  // samples' gradients summed back per tuple with SumRowsByIndex. src, in
  // and out are in the backend's memory, `index` on the host. The defaults
  // are HostGatherRows and HostSumRowsByIndex (below), right where the
  // backend's memory is the host's; CUDA overrides them with kernels
  // (gpu/cuda/slot_kernels.cu, bag_kernels.cu) of the same bits.

  // Row gather: out[i·out_stride + j] = src[index[i]·src_stride + j] for
  // i < n, j < width.
  virtual void GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                          float* out, size_t out_stride);

  // Segmented sum by index, the backward of GatherRows: for each u < groups,
  //   out[u·out_stride + j] = Σ_{i < n : index[i] = u, ascending i} in[i·in_stride + j]
  // starting from −0.0f (a fixed order: the result never depends on threads;
  // no atomics); −0.0f for a u no i names. REQUIRES: every index[i] < groups.
  virtual void SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                              size_t groups, float* out, size_t out_stride);

  // ---- The trainer's cache slots in the backend's memory
  // (actors/trainer/slot_array.hpp, docs/gpu.md "The cache slots").
  //
  // `rows` is a slot array in the backend's memory: slot s at
  // rows + s·row_stride, its weights then its optimizer state. `staged` is
  // memory of AllocatePinned; slot lists, bags and gradients are host
  // memory. The defaults run on the host: right where the backend's memory
  // is the host's, and the reference a device backend's overrides must equal
  // bitwise. Ordering as above: each op sees every op called before it.

  // Host memory a device copies from and to without an extra bounce
  // (CUDA: pinned). Default: plain host memory. FreePinned(null) does nothing.
  virtual float* AllocatePinned(size_t floats);
  virtual void FreePinned(float* p);
  // rows[slots[i]·row_stride + j] = staged[i·row_floats + j] for i < n,
  // j < row_floats (slots distinct). May return before the copy has read
  // `staged`: `staged` may be written again only after WaitStaged of the
  // ticket returned (0: already read). Later ops on `rows` see the rows.
  virtual uint64_t ScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                                size_t row_stride);
  // staged[i·row_floats + j] = rows[slots[i]·row_stride + j]; returns once
  // `staged` holds them.
  virtual void GatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n, size_t row_floats,
                           float* staged);
  // Returns once the copy of ScatterSlots' `ticket` (and every earlier one)
  // has read its staging. Default: nothing (the default copies at once).
  virtual void WaitStaged(uint64_t ticket);
  // The ops called after this one (pooling, the row update, the model's)
  // see the rows of ScatterSlots' `ticket` and every earlier one; nothing
  // else waits (gpu/copy_schedule.hpp says which ticket a batch waits for).
  // Default: nothing.
  virtual void ComputeAfter(uint64_t ticket);
  // PoolBySlot (same contract) with `rows` in the backend's memory; bags and
  // out on the host. Default: PoolBySlot.
  virtual void PoolSlots(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                         float* out, size_t out_stride) {
    PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  // PoolSlots with `out` in the backend's memory too: the pooled values stay
  // where the model reads them (docs/gpu.md "The embedding path on the
  // device"); only the bags' indices cross. Default: PoolBySlot.
  virtual void ResidentPoolSlots(const float* rows, size_t row_stride, size_t width, const SlotBags& bags,
                                 Pooling pooling, float* out, size_t out_stride) {
    PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  // BagGradToUnique (same contract) with `pooled_grad` in the backend's
  // memory (the model's gradient, never downloaded) and grad_unique on the
  // host: only the unique rows' gradients cross, the rows the sync sets
  // name. Default: BagGradToUnique.
  virtual void ResidentBagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width,
                                       const SlotBags& bags, Pooling pooling, float* grad_unique) {
    BagGradToUnique(pooled_grad, in_stride, width, bags, pooling, grad_unique);
  }
  // The row optimizer (models::RowOptimizer::Apply's arithmetic, the
  // per-row functions of gpu/cuda/optimizer_ops.hpp) on n distinct slots:
  // slot slots[i] with its summed gradient grads[i·update.width …]. May
  // return before the update has run: slots and grads are copied before it
  // returns (the caller may reuse them at once), and every later op on
  // `rows` sees the update (stream order; docs/gpu.md).
  virtual void ApplyRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                              const RowUpdate& update);

  // ---- A batch's inputs uploaded ahead (gpu/input_schedule.hpp, docs/gpu.md
  // "A batch's inputs go up ahead").
  //
  // dst[i] = host[i], i < floats, with dst in the backend's memory, copied
  // on the copy stream without waiting for any op: the caller keeps every
  // op off dst until ComputeAfterInputs of the ticket returned (the
  // schedule's sets). `host` may be reused once it returns. Returns the
  // copy's ticket (0: already done). Default: Upload, 0.
  virtual uint64_t UploadInputs(float* dst, const float* host, size_t floats) {
    Upload(dst, host, floats);
    return 0;
  }
  // The ops called after this one see the inputs of UploadInputs' `ticket`
  // (and of every earlier one); nothing else waits. Default: nothing.
  virtual void ComputeAfterInputs(uint64_t) {}

  // ---- The compute stream's waits, timed on the device (docs/gpu.md "The
  // compute stream's waits"). BeginWait and EndWait bracket one wait of the
  // compute stream (what: StreamWaits); a BeginWait without its EndWait is
  // replaced by the next BeginWait of the same kind. TakeWaits: the time
  // between each completed pair since the last call, summed per kind, by the
  // device's clock (CUDA: events recorded on the compute stream, their
  // cudaEventElapsedTime); nullopt where the backend has no clock of its
  // own, the default: a host backend's stream never waits apart from its
  // thread, whose waits the drivers time on the host.
  virtual void BeginWait(WaitFor) {}
  virtual void EndWait(WaitFor) {}
  virtual std::optional<StreamWaits> TakeWaits() { return std::nullopt; }
};

// A GEMM with k == 0, where op(A)·op(B) is empty: C = beta·C, with beta == 0
// not reading C (the BLAS convention). Every backend does it on the host
// like this, because the libraries reject lda == 0.
inline void GemmWithEmptyK(int m, int n, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float* row = c + size_t(i) * ldc;
    for (int j = 0; j < n; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
  }
}

// GatherRows and SumRowsByIndex (same contracts) on host memory, whatever
// the backend: the trainer's pooled embeddings are host memory (PoolSlots
// brings them down), and a dedup group's pooled tuples expand to its
// samples and its samples' gradients sum back to its tuples through these.
void HostGatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n, float* out,
                    size_t out_stride);
void HostSumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                        size_t groups, float* out, size_t out_stride);

// OpenBLAS (or the faster library measured by tools/bench/gemm_bench) and
// vectorized loops; single-threaded: every trainer owns one core's work.
std::unique_ptr<Backend> MakeCpuBackend();

}  // namespace actorrec::gpu
