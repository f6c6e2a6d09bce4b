// CudaBackend: gpu::Backend on an NVIDIA GPU (docs/gpu.md). Its memory is
// the device's: a device-resident model (DLRM) computes with the model ops
// on device buffers (Allocate, Upload/Download on the copy stream, kernels
// of gpu/cuda/dense_kernels.cuh and cuBLAS on the compute stream); Gemm on
// host pointers stages, as below, and PoolBySlot, PoolSlots and
// BagGradToUnique on host pointers upload their inputs or download their
// outputs around the resident ops.
//
// Each call packs its inputs into one grow-only pinned host buffer, copies
// them to one grow-only device buffer on the copy stream, makes the compute
// stream wait on an event recorded after that copy, runs cuBLAS or a kernel
// (gpu/cuda/bag_kernels.cuh) on the compute stream, copies the result back
// on the copy stream after an event of the compute stream, and waits on
// that last event only (no cudaDeviceSynchronize). Buffers grow to the
// largest call seen, so the steady state allocates nothing on the device.
// The ops on the trainer's device slots (ResidentPoolSlots,
// ResidentBagGradToUnique, ApplyRowUpdate) stage only their small host
// arrays, through the argument ring (StageArgs), and wait for nothing but a
// result they hand back: stream order orders them (docs/gpu.md "Who waits
// for what").
//
// Threads: one backend per trainer; a backend is used by one thread at a
// time (its trainer's), which may change between calls, so every call first
// selects the backend's device. Several backends may share a GPU.
//
// Errors: making the backend returns a Status naming the device and the
// CUDA or cuBLAS call. A call that fails later (the device lost, out of
// memory while growing a buffer) throws std::runtime_error with the device,
// the op and the call: the lockstep driver's command prints it and exits 1,
// the trainer actor dies with it and the supervisor ends the run.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda/bag_kernels.cuh"
#include "gpu/cuda/bag_ops.hpp"
#include "gpu/cuda/dense_kernels.cuh"
#include "gpu/cuda/dense_ops.hpp"
#include "gpu/buffer.hpp"
#include "gpu/cuda/optimizer_kernels.cuh"
#include "gpu/cuda/rank_sum_kernels.cuh"
#include "gpu/cuda/slot_kernels.cuh"
#include "gpu/cuda_backend.hpp"
#include "gpu/staging_ring.hpp"

namespace actorrec::gpu {
namespace {

// cuBLAS's workspace, allocated once: with a workspace of its own cuBLAS
// never allocates one per call, whose size could change which algorithm it
// picks (and so the bits) from run to run. 32 MiB is what NVIDIA's cuBLAS
// documentation recommends for Hopper.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

// Parts of a staging buffer start at multiples of 256 bytes (cudaMalloc's
// own alignment), so every part is aligned for any load.
constexpr size_t kAlign = 256;
size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::string CudaWhy(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}
std::string CublasWhy(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + ": " + cublasGetStatusString(status);
}

// Copies `rows` rows of `cols` floats, `ld` apart, into a contiguous block
// (and back): the staging buffers hold matrices and pooled rows without the
// caller's strides, so no copy ever writes between the caller's rows.
void PackRows(const float* src, size_t rows, size_t cols, size_t ld, float* dst) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * cols, src + r * ld, cols * sizeof(float));
}
void UnpackRows(const float* src, size_t rows, size_t cols, size_t ld, float* dst) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * ld, src + r * cols, cols * sizeof(float));
}

// One call's layout in the staging buffers: parts appended one after the
// other; [0, inputs) is copied to the device, [output, output + output_bytes)
// back.
struct Layout {
  size_t end = 0;
  size_t Add(size_t bytes) {
    const size_t at = end;
    end += AlignUp(bytes);
    return at;
  }
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {}
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  ~CudaBackend() override {
    // Nothing is in flight but an upload (every other call waits for its
    // result, or a Download does); errors here have nowhere to go and are
    // ignored.
    cudaSetDevice(device_);
    if (upload_pending_) cudaEventSynchronize(uploaded_);  // upload_host_ may still feed a copy
    for (InputCopy& c : input_copies_) {
      if (c.ticket != 0) cudaEventSynchronize(c.done);  // c.host may still feed a copy
      if (c.done != nullptr) cudaEventDestroy(c.done);
      if (c.host != nullptr) cudaFreeHost(c.host);
    }
    for (auto& [ticket, e] : arg_events_) cudaEventSynchronize(e), cudaEventDestroy(e);
    for (cudaEvent_t e : free_arg_events_) cudaEventDestroy(e);
    if (args_host_ != nullptr) cudaFreeHost(args_host_);
    if (args_device_ != nullptr) cudaFree(args_device_);
    unique_grad_ = Buffer();
    staged_grad_ = Buffer();
    staged_pooled_ = Buffer();
    staged_rows_ = Buffer();
    terms_ = Buffer();  // the moved-from temporaries free them (Free) here
    cross_gs_ = Buffer();
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    for (cudaEvent_t e : {inputs_copied_, computed_, outputs_copied_, finished_}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaStream_t s : {compute_, copy_}) {
      if (s != nullptr) cudaStreamDestroy(s);
    }
    if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
    for (auto& [ticket, e] : in_flight_) cudaEventSynchronize(e), cudaEventDestroy(e);
    for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
    for (const TimedWait& w : timed_waits_) cudaEventDestroy(w.begin), cudaEventDestroy(w.end);
    for (cudaEvent_t e : open_waits_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : timing_events_) cudaEventDestroy(e);
    for (cudaEvent_t e : {slot_computed_, gathered_}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (auto& [host, pinned] : pinned_) cudaFreeHost(const_cast<float*>(host)), cudaFree(pinned.mirror);
    if (adam_table_ != nullptr) cudaFree(adam_table_);
    for (void* p : {upload_host_, download_host_}) {
      if (p != nullptr) cudaFreeHost(p);
    }
    if (workspace_ != nullptr) cudaFree(workspace_);
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    if (host_buffer_ != nullptr) cudaFreeHost(host_buffer_);
  }

  // Everything a call needs but its buffers. Unavailable naming the call.
  Status Init() {
    auto cuda = [&](cudaError_t err, const char* call) {
      return err == cudaSuccess ? Status::Ok() : Status::Unavailable(Where(call) + ": " + CudaWhy(err));
    };
    auto blas = [&](cublasStatus_t st, const char* call) {
      return st == CUBLAS_STATUS_SUCCESS ? Status::Ok() : Status::Unavailable(Where(call) + ": " + CublasWhy(st));
    };
    Status st = cuda(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop{};
    if (st.ok()) st = cuda(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    if (st.ok()) {
      device_name_ = prop.name;
      describe_ = std::string(prop.name) + ", " + std::to_string(prop.totalGlobalMem >> 20) + " MiB, compute " +
                  std::to_string(prop.major) + "." + std::to_string(prop.minor);
    }
    for (cudaStream_t* s : {&compute_, &copy_}) {
      if (st.ok()) st = cuda(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    }
    for (cudaEvent_t* e : {&inputs_copied_, &computed_, &uploaded_, &slot_computed_}) {
      if (st.ok()) st = cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    }
    // The host waits on this one: blocking, so that a waiting trainer
    // leaves its core to the other actors instead of spinning.
    for (cudaEvent_t* e : {&outputs_copied_, &gathered_, &finished_}) {
      if (st.ok()) {
        st = cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming | cudaEventBlockingSync),
                  "cudaEventCreateWithFlags");
      }
    }
    if (st.ok()) st = cuda(cudaMalloc(&workspace_, kCublasWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
    if (st.ok()) st = blas(cublasCreate(&cublas_), "cublasCreate");
    if (st.ok()) st = blas(cublasSetStream(cublas_, compute_), "cublasSetStream");
    // FP32 only: no TF32, no reduced-precision reductions.
    if (st.ok()) st = blas(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
    if (st.ok()) st = blas(cublasSetWorkspace(cublas_, workspace_, kCublasWorkspaceBytes), "cublasSetWorkspace");
    int runtime = 0, driver = 0, cublas_version = 0;
    if (st.ok()) st = cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    if (st.ok()) st = cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    if (st.ok()) st = blas(cublasGetVersion(cublas_, &cublas_version), "cublasGetVersion");
    if (!st.ok()) return st;
    auto version = [](int v, int major_unit) {
      return std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / (major_unit / 100));
    };
    describe_ += "; CUDA runtime " + version(runtime, 1000) + ", driver " + version(driver, 1000) + ", cuBLAS " +
                 version(cublas_version, 10000) + "." + std::to_string(cublas_version % 100);
    return Status::Ok();
  }

  std::string name() const override {
    return "cuda (device " + std::to_string(device_) + ": " + describe_ + "; FP32 pedantic cuBLAS, one stream set per trainer)";
  }

  void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    if (m == 0 || n == 0) return;
    if (k == 0) return GemmWithEmptyK(m, n, beta, c, ldc);
    // Row-major X (rows × cols, ld) is column-major Xᵀ with the same ld, so
    // row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS
    // gets B first, A second, and n × m. The staged copies are contiguous,
    // so each ld becomes its matrix's column count.
    const size_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
    const size_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
    Layout layout;
    const size_t at_a = layout.Add(a_rows * a_cols * sizeof(float));
    const size_t at_b = layout.Add(b_rows * b_cols * sizeof(float));
    const size_t at_c = layout.Add(size_t(m) * n * sizeof(float));
    Reserve(layout.end, "Gemm");
    PackRows(a, a_rows, a_cols, lda, HostAt<float>(at_a));
    PackRows(b, b_rows, b_cols, ldb, HostAt<float>(at_b));
    // beta == 0 never reads C (the BLAS convention): C is not sent then.
    const bool read_c = beta != 0.0f;
    if (read_c) PackRows(c, m, n, ldc, HostAt<float>(at_c));
    CopyIn(read_c ? layout.end : at_c, "Gemm");
    const cublasStatus_t status =
        cublasSgemm(cublas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha,
                    DeviceAt<float>(at_b), static_cast<int>(b_cols), DeviceAt<float>(at_a), static_cast<int>(a_cols),
                    &beta, DeviceAt<float>(at_c), n);
    if (status != CUBLAS_STATUS_SUCCESS) Fail("Gemm", "cublasSgemm", CublasWhy(status));
    CopyOut(at_c, size_t(m) * n * sizeof(float), "Gemm");
    UnpackRows(HostAt<float>(at_c), m, n, ldc, c);
  }

  // The bags' unique rows packed by unique index (row u at u·width) and
  // uploaded, then PoolSlots over them with slots 0 … unique_count − 1: only
  // the rows this call pools cross the bus, not the caller's whole array.
  void PoolBySlot(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                  float* out, size_t out_stride) override {
    if (bags.samples == 0 || width == 0) return;
    const size_t unique = bags.unique_count;
    packed_rows_.resize(unique * width);
    by_index_.resize(unique);
    for (size_t u = 0; u < unique; ++u) {
      std::memcpy(packed_rows_.data() + u * width, rows + size_t{bags.unique_slots[u]} * row_stride,
                  width * sizeof(float));
      by_index_[u] = static_cast<uint32_t>(u);
    }
    float* up = staged_rows_.Grow(*this, packed_rows_.size());
    Upload(up, packed_rows_.data(), packed_rows_.size());
    SlotBags staged = bags;
    staged.unique_slots = by_index_.data();
    PoolSlots(up, width, width, staged, pooling, out, out_stride);
  }

  // The pooled gradient packed (without the caller's stride) and uploaded,
  // then ResidentBagGradToUnique on it.
  void BagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                       Pooling pooling, float* grad_unique) override {
    if (bags.unique_count == 0 || width == 0) return;
    packed_.resize(bags.samples * width);
    PackRows(pooled_grad, bags.samples, width, in_stride, packed_.data());
    float* up = staged_grad_.Grow(*this, packed_.size());
    Upload(up, packed_.data(), packed_.size());
    ResidentBagGradToUnique(up, width, width, bags, pooling, grad_unique);
  }

  // ---- Device memory and the model's ops on it (device pointers; the
  // compute stream runs them in call order).

  bool device_memory() const override { return true; }

  float* Allocate(size_t floats) override {
    Check(cudaSetDevice(device_), "Allocate", "cudaSetDevice");
    void* p = nullptr;
    Check(cudaMalloc(&p, std::max<size_t>(floats, 1) * sizeof(float)), "Allocate", "cudaMalloc");
    return static_cast<float*>(p);
  }

  void Free(float* p) override {
    if (p == nullptr) return;
    // cudaFree waits for the work using p; an error here (a lost device)
    // has nowhere to go, as in the destructor.
    cudaSetDevice(device_);
    cudaFree(p);
  }

  // Through a pinned buffer on the copy stream, after the compute stream's
  // work so far (which may still read dst); the compute stream's later work
  // waits for the copy. The call returns before the copy ends; the next
  // Upload waits for it before reusing the pinned buffer.
  void Upload(float* dst, const float* host, size_t floats) override {
    if (floats == 0) return;
    const size_t bytes = floats * sizeof(float);
    Check(cudaSetDevice(device_), "Upload", "cudaSetDevice");
    if (upload_pending_) Check(cudaEventSynchronize(uploaded_), "Upload", "cudaEventSynchronize");
    upload_pending_ = false;
    GrowPinned(&upload_host_, &upload_capacity_, bytes, "Upload");
    std::memcpy(upload_host_, host, bytes);
    Check(cudaEventRecord(computed_, compute_), "Upload", "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_, computed_, 0), "Upload", "cudaStreamWaitEvent");
    Check(cudaMemcpyAsync(dst, upload_host_, bytes, cudaMemcpyHostToDevice, copy_), "Upload",
          "cudaMemcpyAsync (host to device)");
    Check(cudaEventRecord(uploaded_, copy_), "Upload", "cudaEventRecord");
    Check(cudaStreamWaitEvent(compute_, uploaded_, 0), "Upload", "cudaStreamWaitEvent");
    upload_pending_ = true;
  }

  // A batch's inputs ahead (gpu/input_schedule.hpp): on the copy stream,
  // waiting for no op of the compute stream (the trainer keeps dst out of
  // use until ComputeAfterInputs). Each copy reads one of kInputCopies
  // pinned buffers, taken in turn and reused once its event says the copy
  // before read it (two batches back: long done). Built, not yet run on a
  // GPU.
  uint64_t UploadInputs(float* dst, const float* host, size_t floats) override {
    if (floats == 0) return 0;
    const size_t bytes = floats * sizeof(float);
    Check(cudaSetDevice(device_), "UploadInputs", "cudaSetDevice");
    InputCopy& c = input_copies_[input_tickets_ % kInputCopies];
    if (c.done == nullptr) {
      Check(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming | cudaEventBlockingSync), "UploadInputs",
            "cudaEventCreateWithFlags");
    }
    if (c.ticket != 0) Check(cudaEventSynchronize(c.done), "UploadInputs", "cudaEventSynchronize");
    GrowPinned(&c.host, &c.capacity, bytes, "UploadInputs");
    std::memcpy(c.host, host, bytes);
    Check(cudaMemcpyAsync(dst, c.host, bytes, cudaMemcpyHostToDevice, copy_), "UploadInputs",
          "cudaMemcpyAsync (host to device)");
    Check(cudaEventRecord(c.done, copy_), "UploadInputs", "cudaEventRecord");
    c.ticket = ++input_tickets_;
    return c.ticket;
  }
  // The compute stream waits for that copy's event (a later copy's, if the
  // buffer was reused since: the copy stream runs them in order).
  void ComputeAfterInputs(uint64_t ticket) override {
    if (ticket == 0) return;
    Check(cudaSetDevice(device_), "ComputeAfterInputs", "cudaSetDevice");
    const InputCopy& c = input_copies_[(ticket - 1) % kInputCopies];
    Check(cudaStreamWaitEvent(compute_, c.done, 0), "ComputeAfterInputs", "cudaStreamWaitEvent");
  }

  // After the compute stream's work so far, on the copy stream, waiting
  // for that copy alone.
  void Download(float* host, const float* src, size_t floats) override {
    if (floats == 0) return;
    const size_t bytes = floats * sizeof(float);
    Check(cudaSetDevice(device_), "Download", "cudaSetDevice");
    GrowPinned(&download_host_, &download_capacity_, bytes, "Download");
    Check(cudaEventRecord(computed_, compute_), "Download", "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_, computed_, 0), "Download", "cudaStreamWaitEvent");
    Check(cudaMemcpyAsync(download_host_, src, bytes, cudaMemcpyDeviceToHost, copy_), "Download",
          "cudaMemcpyAsync (device to host)");
    Check(cudaEventRecord(outputs_copied_, copy_), "Download", "cudaEventRecord");
    Check(cudaEventSynchronize(outputs_copied_), "Download", "cudaEventSynchronize");
    std::memcpy(host, download_host_, bytes);
  }

  void ResidentGemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) override {
    if (m == 0 || n == 0) return;
    Check(cudaSetDevice(device_), "ResidentGemm", "cudaSetDevice");
    if (k == 0) {  // C = beta·C, beta == 0 not reading C (GemmWithEmptyK on the device)
      if (beta == 0.0f) {
        Check(cudaMemset2DAsync(c, size_t(ldc) * sizeof(float), 0, size_t(n) * sizeof(float), m, compute_),
              "ResidentGemm", "cudaMemset2DAsync");
        return;
      }
      const float zero = 0.0f;
      const cublasStatus_t status =
          cublasSgeam(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, &beta, c, ldc, &zero, c, ldc, c, ldc);
      if (status != CUBLAS_STATUS_SUCCESS) Fail("ResidentGemm", "cublasSgeam", CublasWhy(status));
      return;
    }
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ (as Gemm).
    const cublasStatus_t status =
        cublasSgemm(cublas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                    &alpha, b, ldb, a, lda, &beta, c, ldc);
    if (status != CUBLAS_STATUS_SUCCESS) Fail("ResidentGemm", "cublasSgemm", CublasWhy(status));
  }

  void BiasAdd(float* out, const float* bias, size_t n, int width, bool relu) override {
    Select("BiasAdd");
    Check(cuda::LaunchBiasAdd(out, bias, n, size_t(width), relu, compute_), "BiasAdd", "LaunchBiasAdd");
  }
  void ReluGrad(const float* go, const float* out, float* gk, size_t count) override {
    Select("ReluGrad");
    Check(cuda::LaunchReluGrad(go, out, gk, count, compute_), "ReluGrad", "LaunchReluGrad");
  }
  void BiasGrad(const float* g, size_t n, int width, float* db) override {
    Select("BiasGrad");
    Check(cuda::LaunchColumnSums(g, n, size_t(width), db, compute_), "BiasGrad", "LaunchColumnSums");
  }

  // The terms and dlogit on the device; the terms come back (n floats) and
  // are summed on the host in sample order (docs/gpu.md says why).
  double BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit) override {
    Select("BceWithLogits");
    if (n == 0) return 0.0;
    terms_.Grow(*this, n);
    Check(cuda::LaunchBceWithLogits(logits, labels, n, scale, terms_.data(), dlogit, compute_), "BceWithLogits",
          "LaunchBceWithLogits");
    host_terms_.resize(n);
    Download(host_terms_.data(), terms_.data(), n);
    return cuda::SumLossTerms(host_terms_.data(), n);
  }

  void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width,
                          float* r) override {
    Select("InteractionForward");
    CheckInteractionWidth(T, d, z != nullptr, width, "InteractionForward");
    Check(cuda::LaunchInteractionForward(z, pooled, n, T, d, r, compute_), "InteractionForward",
          "LaunchInteractionForward");
  }
  void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                           size_t width, float* dz, float* dpooled) override {
    Select("InteractionBackward");
    CheckInteractionWidth(T, d, z != nullptr, width, "InteractionBackward");
    Check(cuda::LaunchInteractionBackward(dr, z, pooled, n, T, d, dz, dpooled, compute_), "InteractionBackward",
          "LaunchInteractionBackward");
  }

  void DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d, size_t w,
                 float* x) override {
    Select("DeepInput");
    Check(cuda::LaunchDeepInput(dense, pooled, n, dd, T, C, d, w, x, compute_), "DeepInput", "LaunchDeepInput");
  }
  void WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                      const float* bias, bool fm, float* sums, float* logits) override {
    Select("WideDeepLogits");
    Check(cuda::LaunchWideDeepLogits(deep, pooled, n, T, C, d, bias, fm, sums, logits, compute_), "WideDeepLogits",
          "LaunchWideDeepLogits");
  }
  void WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit, size_t n,
                          size_t dd, size_t T, size_t C, size_t d, float* pooled_grad) override {
    Select("WideDeepPooledGrad");
    Check(cuda::LaunchWideDeepPooledGrad(dx, pooled, sums, dlogit, n, dd, T, C, d, pooled_grad, compute_),
          "WideDeepPooledGrad", "LaunchWideDeepPooledGrad");
  }

  void CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0, float* s,
                    float* next) override {
    Select("CrossForward");
    Check(cuda::LaunchCrossForward(x0, x, w, b, n, d0, s, next, compute_), "CrossForward", "LaunchCrossForward");
  }
  void DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0, size_t hw,
                 float* logits) override {
    Select("DcnLogits");
    Check(cuda::LaunchDcnLogits(fw, fb, xl, h, n, d0, hw, logits, compute_), "DcnLogits", "LaunchDcnLogits");
  }
  void DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n, size_t d0,
                        size_t hw, float* gfw, float* gfb, float* g, float* dh) override {
    Select("DcnFinalBackward");
    Check(cuda::LaunchDcnFinalBackward(dlogit, fw, xl, h, n, d0, hw, gfw, gfb, g, dh, compute_), "DcnFinalBackward",
          "LaunchDcnFinalBackward");
  }
  // gs (Dot(g, x0) per sample) in the backend's scratch: the compute
  // stream runs the layers one after another, so one buffer serves all.
  void CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0, float* g,
                     float* dx0, float* gw, float* gb) override {
    Select("CrossBackward");
    float* gs = cross_gs_.Grow(*this, n);
    Check(cuda::LaunchCrossBackward(x0, x, w, s, n, d0, g, dx0, gw, gb, gs, compute_), "CrossBackward",
          "LaunchCrossBackward");
  }
  void DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad) override {
    Select("DcnPooledGrad");
    Check(cuda::LaunchDcnPooledGrad(g, dx0, n, d0, dd, pooled_grad, compute_), "DcnPooledGrad",
          "LaunchDcnPooledGrad");
  }
  void SetZero(float* p, size_t floats) override {
    if (floats == 0) return;
    Check(cudaSetDevice(device_), "SetZero", "cudaSetDevice");
    Check(cudaMemsetAsync(p, 0, floats * sizeof(float), compute_), "SetZero", "cudaMemsetAsync");
  }

  // ---- Sums of trainers sharing this device (gpu/shared_device_collective.hpp),
  // on the compute stream. A sync scheduler's thread calls these three
  // while the trainer's thread enqueues its next batch: they touch only the
  // compute stream and finished_, never the staging buffers or the rings.
  void CopyResident(float* dst, const float* src, size_t floats) override {
    if (floats == 0) return;
    Check(cudaSetDevice(device_), "CopyResident", "cudaSetDevice");
    Check(cudaMemcpyAsync(dst, src, floats * sizeof(float), cudaMemcpyDeviceToDevice, compute_), "CopyResident",
          "cudaMemcpyAsync (device to device)");
  }
  void RankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out) override {
    if (n == 0) return;
    Check(cudaSetDevice(device_), "RankOrderSum", "cudaSetDevice");
    Check(cuda::LaunchRankOrderSum(gathered, n, ranks, out, compute_), "RankOrderSum", "LaunchRankOrderSum");
  }
  // The compute stream's work so far, waited for on a blocking-sync event.
  void Finish() override {
    Check(cudaSetDevice(device_), "Finish", "cudaSetDevice");
    Check(cudaEventRecord(finished_, compute_), "Finish", "cudaEventRecord");
    Check(cudaEventSynchronize(finished_), "Finish", "cudaEventSynchronize");
  }

  // ---- The trainer's cache slots in device memory (docs/gpu.md "The cache
  // slots"). The cache partition calls AllocatePinned, ScatterSlots,
  // GatherSlots and WaitStaged from its own thread while the trainer
  // computes: they use only the members below slot_mu_ and the two streams
  // (the CUDA runtime's calls are thread-safe), never the trainer's staging.

  // Pinned host memory with a device mirror of the same size: a staged
  // span [p, p + k) is copied to mirror + (p − host) and the kernels read
  // it there, so the ring's tickets free both at once.
  float* AllocatePinned(size_t floats) override {
    std::lock_guard<std::mutex> lock(slot_mu_);
    Check(cudaSetDevice(device_), "AllocatePinned", "cudaSetDevice");
    const size_t bytes = std::max<size_t>(floats, 1) * sizeof(float);
    void* host = nullptr;
    void* mirror = nullptr;
    Check(cudaHostAlloc(&host, bytes, cudaHostAllocDefault), "AllocatePinned", "cudaHostAlloc (staging ring)");
    if (cudaError_t err = cudaMalloc(&mirror, bytes); err != cudaSuccess) {
      cudaFreeHost(host);
      Fail("AllocatePinned", "cudaMalloc (staging ring's mirror)", CudaWhy(err));
    }
    pinned_[static_cast<float*>(host)] = {static_cast<float*>(mirror), std::max<size_t>(floats, 1)};
    return static_cast<float*>(host);
  }
  void FreePinned(float* p) override {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(slot_mu_);
    auto it = pinned_.find(p);
    if (it == pinned_.end()) throw std::invalid_argument(Where("FreePinned") + ": memory not from AllocatePinned");
    Check(cudaFree(it->second.mirror), "FreePinned", "cudaFree");
    Check(cudaFreeHost(p), "FreePinned", "cudaFreeHost");
    pinned_.erase(it);
  }

  // Copy stream: the staged rows and their slots up (one copy when the
  // slots follow the rows, as SlotArray stages them), then, once the
  // compute stream's work so far is done (the slots' last readers), the
  // scatter kernel; the ticket's event after it. The compute stream waits
  // for it only when told (ComputeAfter: the batch whose rows these are).
  uint64_t ScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                        size_t row_stride) override {
    if (n == 0) return 0;
    std::lock_guard<std::mutex> lock(slot_mu_);
    Check(cudaSetDevice(device_), "ScatterSlots", "cudaSetDevice");
    const float* rows_up = Mirror(staged, n * row_floats, "ScatterSlots");
    const float* slots_end = reinterpret_cast<const float*>(slots);
    if (slots_end == staged + n * row_floats) {
      CopyUp(rows_up, staged, (n * row_floats + n) * sizeof(float), "ScatterSlots");
    } else {
      CopyUp(rows_up, staged, n * row_floats * sizeof(float), "ScatterSlots");
      CopyUp(Mirror(slots_end, n, "ScatterSlots"), slots_end, n * sizeof(uint32_t), "ScatterSlots");
    }
    const auto* slots_up = reinterpret_cast<const uint32_t*>(Mirror(slots_end, n, "ScatterSlots"));
    Check(cudaEventRecord(slot_computed_, compute_), "ScatterSlots", "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_, slot_computed_, 0), "ScatterSlots", "cudaStreamWaitEvent");
    Check(cuda::LaunchScatterSlots(rows_up, slots_up, n, row_floats, rows, row_stride, copy_), "ScatterSlots",
          "LaunchScatterSlots");
    cudaEvent_t done = TicketEvent();
    Check(cudaEventRecord(done, copy_), "ScatterSlots", "cudaEventRecord");
    in_flight_.emplace_back(++tickets_, done);
    return tickets_;
  }

  // The compute stream waits for the ticket's event; one no longer in
  // flight has been waited for on the host already (WaitStaged).
  void ComputeAfter(uint64_t ticket) override {
    Select("ComputeAfter");
    std::lock_guard<std::mutex> lock(slot_mu_);
    for (const auto& [t, e] : in_flight_) {
      if (t == ticket) {
        Check(cudaStreamWaitEvent(compute_, e, 0), "ComputeAfter", "cudaStreamWaitEvent");
        return;
      }
    }
  }

  // After the compute stream's work so far (the rows' updates): the slots
  // up, the gather kernel into the mirror, one copy down; waits for it.
  void GatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n, size_t row_floats,
                   float* staged) override {
    if (n == 0) return;
    std::lock_guard<std::mutex> lock(slot_mu_);
    Check(cudaSetDevice(device_), "GatherSlots", "cudaSetDevice");
    const float* slots_at = reinterpret_cast<const float*>(slots);
    float* rows_down = Mirror(staged, n * row_floats, "GatherSlots");
    auto* slots_up = reinterpret_cast<uint32_t*>(Mirror(slots_at, n, "GatherSlots"));
    CopyUp(reinterpret_cast<float*>(slots_up), slots_at, n * sizeof(uint32_t), "GatherSlots");
    Check(cudaEventRecord(slot_computed_, compute_), "GatherSlots", "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_, slot_computed_, 0), "GatherSlots", "cudaStreamWaitEvent");
    Check(cuda::LaunchGatherSlots(rows, row_stride, slots_up, n, row_floats, rows_down, copy_), "GatherSlots",
          "LaunchGatherSlots");
    Check(cudaMemcpyAsync(staged, rows_down, n * row_floats * sizeof(float), cudaMemcpyDeviceToHost, copy_),
          "GatherSlots", "cudaMemcpyAsync (device to host)");
    Check(cudaEventRecord(gathered_, copy_), "GatherSlots", "cudaEventRecord");
    Check(cudaEventSynchronize(gathered_), "GatherSlots", "cudaEventSynchronize");
  }

  void WaitStaged(uint64_t ticket) override {
    std::lock_guard<std::mutex> lock(slot_mu_);
    while (!in_flight_.empty() && in_flight_.front().first <= ticket) {
      cudaEvent_t e = in_flight_.front().second;
      Check(cudaEventSynchronize(e), "WaitStaged", "cudaEventSynchronize");
      in_flight_.pop_front();
      free_events_.push_back(e);
    }
  }

  // The compute stream's waits (Backend::BeginWait): an event with timing
  // on the compute stream before the wait and one after it. Each completes
  // when the stream reaches it, so the time between them is how long the
  // stream stood at the wait (ComputeAfter's copies), or stood idle for the
  // host (the sync: nothing is enqueued until the sum's step), by the
  // device's clock. The trainer's thread only, as the compute stream.
  void BeginWait(WaitFor what) override {
    Select("BeginWait");
    cudaEvent_t& open = open_waits_[static_cast<size_t>(what)];
    if (open == nullptr) open = TimingEvent();
    Check(cudaEventRecord(open, compute_), "BeginWait", "cudaEventRecord");
  }
  void EndWait(WaitFor what) override {
    Select("EndWait");
    cudaEvent_t& open = open_waits_[static_cast<size_t>(what)];
    if (open == nullptr) return;  // no BeginWait: nothing to time
    cudaEvent_t end = TimingEvent();
    Check(cudaEventRecord(end, compute_), "EndWait", "cudaEventRecord");
    timed_waits_.push_back({what, open, end});
    open = nullptr;
  }
  std::optional<StreamWaits> TakeWaits() override {
    Select("TakeWaits");
    StreamWaits waits;
    waits.on_device = true;
    for (const TimedWait& w : timed_waits_) {
      Check(cudaEventSynchronize(w.end), "TakeWaits", "cudaEventSynchronize");
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, w.begin, w.end), "TakeWaits", "cudaEventElapsedTime");
      (w.what == WaitFor::kRows ? waits.rows_s : waits.sync_s) += ms * 1e-3;
      timing_events_.push_back(w.begin);
      timing_events_.push_back(w.end);
    }
    timed_waits_.clear();
    return waits;
  }

  // The dedup groups' two ops on device rows (src, in, out in this
  // backend's memory): the index goes up through the argument ring and the
  // kernel runs on the compute stream; nothing waits. SumRowsByIndex
  // sums each group in ascending sample order through a CSR built on the
  // host (BuildBagCsr, a stable counting sort), never with atomics.
  void GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n, float* out,
                  size_t out_stride) override {
    if (n == 0 || width == 0) return;
    Layout layout;
    const size_t at_index = layout.Add(n * sizeof(uint32_t));
    const ArgSpan args = StageArgs(layout.end, "GatherRows");
    std::memcpy(args.Host<uint32_t>(at_index), index, n * sizeof(uint32_t));
    SendArgs(args, "GatherRows");
    Check(cuda::LaunchGatherRows(src, src_stride, width, args.Device<uint32_t>(at_index), n, out, out_stride,
                                 compute_),
          "GatherRows", "LaunchGatherRows");
    ReleaseArgs(args, "GatherRows");
  }

  void SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                      size_t groups, float* out, size_t out_stride) override {
    if (groups == 0 || width == 0) return;
    cuda::BuildBagCsr(index, nullptr, n, groups, &csr_);
    Layout layout;
    const size_t at_start = layout.Add((groups + 1) * sizeof(uint32_t));
    const size_t at_sample = layout.Add(n * sizeof(uint32_t));
    const ArgSpan args = StageArgs(layout.end, "SumRowsByIndex");
    std::memcpy(args.Host<uint32_t>(at_start), csr_.row_start.data(), (groups + 1) * sizeof(uint32_t));
    std::memcpy(args.Host<uint32_t>(at_sample), csr_.sample_of.data(), n * sizeof(uint32_t));
    SendArgs(args, "SumRowsByIndex");
    Check(cuda::LaunchSumRowsByIndex(in, in_stride, width, args.Device<uint32_t>(at_start),
                                     args.Device<uint32_t>(at_sample), groups, out, out_stride, compute_),
          "SumRowsByIndex", "LaunchSumRowsByIndex");
    ReleaseArgs(args, "SumRowsByIndex");
  }

  // ResidentPoolSlots into a device buffer, then the pooled values down.
  void PoolSlots(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                 float* out, size_t out_stride) override {
    if (bags.samples == 0 || width == 0) return;
    float* pooled = staged_pooled_.Grow(*this, bags.samples * width);
    ResidentPoolSlots(rows, row_stride, width, bags, pooling, pooled, width);
    packed_.resize(bags.samples * width);
    Download(packed_.data(), pooled, packed_.size());
    UnpackRows(packed_.data(), bags.samples, width, out_stride, out);
  }

  // The pooled values into device memory: the bags' indices go up through
  // the argument ring, nothing comes down, nothing waits.
  void ResidentPoolSlots(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                         float* out, size_t out_stride) override {
    if (bags.samples == 0 || width == 0) return;
    const size_t unique = bags.unique_count, positions = bags.offsets[bags.samples];
    Layout layout;
    const size_t at_slots = layout.Add(unique * sizeof(uint32_t));
    const size_t at_inverse = layout.Add(positions * sizeof(uint32_t));
    const size_t at_offsets = layout.Add((bags.samples + 1) * sizeof(uint32_t));
    const ArgSpan args = StageArgs(layout.end, "ResidentPoolSlots");
    std::memcpy(args.Host<uint32_t>(at_slots), bags.unique_slots, unique * sizeof(uint32_t));
    std::memcpy(args.Host<uint32_t>(at_inverse), bags.inverse, positions * sizeof(uint32_t));
    std::memcpy(args.Host<uint32_t>(at_offsets), bags.offsets, (bags.samples + 1) * sizeof(uint32_t));
    SendArgs(args, "ResidentPoolSlots");
    Check(cuda::LaunchPoolBySlot(rows, row_stride, width, args.Device<uint32_t>(at_slots),
                                 args.Device<uint32_t>(at_inverse), args.Device<uint32_t>(at_offsets), bags.samples,
                                 pooling == Pooling::kMean, out, out_stride, compute_),
          "ResidentPoolSlots", "LaunchPoolBySlot");
    ReleaseArgs(args, "ResidentPoolSlots");
  }

  // The model's pooled gradient read where it is (device memory); the
  // bags' CSR goes up through the argument ring and the unique rows'
  // gradients come down (one download, which waits for them).
  void ResidentBagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                               Pooling pooling, float* grad_unique) override {
    if (bags.unique_count == 0 || width == 0) return;
    float* out = unique_grad_.Grow(*this, bags.unique_count * width);
    ResidentRowGrads(pooled_grad, in_stride, width, bags, pooling, out);
    Download(grad_unique, out, bags.unique_count * width);
  }
  // The same into device memory (grad_unique): nothing comes down, nothing
  // waits.
  void ResidentRowGrads(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                        Pooling pooling, float* out) override {
    if (bags.unique_count == 0 || width == 0) return;
    cuda::BuildBagCsr(bags.inverse, bags.offsets, bags.samples, bags.unique_count, &csr_);
    const size_t unique = bags.unique_count, positions = csr_.sample_of.size();
    Layout layout;
    const size_t at_offsets = layout.Add((bags.samples + 1) * sizeof(uint32_t));
    const size_t at_start = layout.Add((unique + 1) * sizeof(uint32_t));
    const size_t at_sample = layout.Add(positions * sizeof(uint32_t));
    const ArgSpan args = StageArgs(layout.end, "ResidentBagGradToUnique");
    std::memcpy(args.Host<uint32_t>(at_offsets), bags.offsets, (bags.samples + 1) * sizeof(uint32_t));
    std::memcpy(args.Host<uint32_t>(at_start), csr_.row_start.data(), (unique + 1) * sizeof(uint32_t));
    std::memcpy(args.Host<uint32_t>(at_sample), csr_.sample_of.data(), positions * sizeof(uint32_t));
    SendArgs(args, "ResidentBagGradToUnique");
    Check(cuda::LaunchBagGradToUnique(pooled_grad, in_stride, width, args.Device<uint32_t>(at_offsets),
                                      args.Device<uint32_t>(at_start), args.Device<uint32_t>(at_sample), unique,
                                      pooling == Pooling::kMean, out, compute_),
          "ResidentBagGradToUnique", "LaunchBagGradToUnique");
    ReleaseArgs(args, "ResidentBagGradToUnique");
  }

  // The slots and their gradients up through the argument ring, the row
  // optimizer's kernel on the compute stream; returns without waiting for
  // it (stream order: every later op on the slots, a pooling, a gather's
  // event, a download, runs after it; docs/gpu.md "Who waits for what").
  void ApplyRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                      const RowUpdate& u) override {
    RowUpdateFrom(rows, row_stride, slots, n, grads, false, u);
  }
  // The same with the summed gradients in device memory: only the slots go up.
  void ApplyResidentRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                              const RowUpdate& u) override {
    RowUpdateFrom(rows, row_stride, slots, n, grads, true, u);
  }

 private:
  // ApplyRowUpdate's body: grads on the host (staged through the argument
  // ring with the slots) or, resident, read where they are.
  void RowUpdateFrom(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                     bool resident, const RowUpdate& u) {
    if (n == 0) return;
    const float* table = u.kind == RowUpdateKind::kAdam ? AdamTable(u) : nullptr;
    Layout layout;
    const size_t at_slots = layout.Add(n * sizeof(uint32_t));
    const size_t at_grads = resident ? 0 : layout.Add(n * u.width * sizeof(float));
    const ArgSpan args = StageArgs(layout.end, "ApplyRowUpdate");
    std::memcpy(args.Host<uint32_t>(at_slots), slots, n * sizeof(uint32_t));
    if (!resident) std::memcpy(args.Host<float>(at_grads), grads, n * u.width * sizeof(float));
    SendArgs(args, "ApplyRowUpdate");
    const cuda::RowBatch batch{rows, row_stride, args.Device<uint32_t>(at_slots),
                               resident ? grads : args.Device<float>(at_grads), n, u.width};
    cudaError_t err = cudaSuccess;
    switch (u.kind) {
      case RowUpdateKind::kSgd: err = cuda::LaunchRowSgd(batch, u.lr, compute_); break;
      case RowUpdateKind::kAdagrad: err = cuda::LaunchRowAdagrad(batch, u.lr, u.eps, compute_); break;
      case RowUpdateKind::kRowwiseAdagrad: err = cuda::LaunchRowwiseAdagrad(batch, u.lr, u.eps, compute_); break;
      case RowUpdateKind::kAdam:
        err = cuda::LaunchRowAdam(batch, {u.lr, u.beta1, u.beta2, u.eps}, table, kAdamTableSteps, compute_);
        break;
    }
    Check(err, "ApplyRowUpdate", "LaunchRow*");
    ReleaseArgs(args, "ApplyRowUpdate");
  }

 private:
  // ---- The argument ring: the small host arrays a kernel on the compute
  // stream reads (slot lists, bag indices, the row update's gradients),
  // staged without waiting for the kernel. A span is pinned memory with a
  // device mirror; it is copied up on the compute stream itself (so the
  // kernel after it sees it) and freed by an event recorded after that
  // kernel (gpu/staging_ring.hpp's tickets). The host waits only when the
  // ring comes round to a span whose kernel has not run yet, or grows.
  // The trainer's thread only.
  struct ArgSpan {
    size_t offset = 0, floats = 0, bytes = 0;
    char* host = nullptr;
    char* device = nullptr;
    template <class T>
    T* Host(size_t at) const { return reinterpret_cast<T*>(host + at); }
    template <class T>
    T* Device(size_t at) const { return reinterpret_cast<T*>(device + at); }
  };
  ArgSpan StageArgs(size_t bytes, const char* op) {
    Check(cudaSetDevice(device_), op, "cudaSetDevice");
    const size_t floats = AlignUp(std::max<size_t>(bytes, 1)) / sizeof(float);
    if (floats > arg_ring_.capacity()) {  // grow: every span in flight first
      WaitArgs(UINT64_MAX, op);
      if (args_device_ != nullptr) Check(cudaFree(args_device_), op, "cudaFree");
      if (args_host_ != nullptr) Check(cudaFreeHost(args_host_), op, "cudaFreeHost");
      args_device_ = args_host_ = nullptr;
      arg_ring_ = StagingRing(0);
      // Room for several calls' arguments before the ring comes round.
      const size_t grown = std::max({floats * 4, arg_ring_floats_ * 2, kMinArgRingFloats});
      Check(cudaMalloc(&args_device_, grown * sizeof(float)), op, "cudaMalloc (argument ring)");
      Check(cudaHostAlloc(&args_host_, grown * sizeof(float), cudaHostAllocDefault), op,
            "cudaHostAlloc (argument ring)");
      arg_ring_floats_ = grown;
      arg_ring_ = StagingRing(grown);
    }
    auto span = arg_ring_.Reserve(floats);
    if (!span.ok()) Fail(op, "the argument ring", span.status().ToString());  // floats fit: our bug
    if (span->wait_for != 0) WaitArgs(span->wait_for, op);
    ArgSpan args;
    args.offset = span->offset;
    args.floats = floats;
    args.bytes = bytes;
    args.host = static_cast<char*>(args_host_) + span->offset * sizeof(float);
    args.device = static_cast<char*>(args_device_) + span->offset * sizeof(float);
    return args;
  }
  void SendArgs(const ArgSpan& args, const char* op) {
    Check(cudaMemcpyAsync(args.device, args.host, args.bytes, cudaMemcpyHostToDevice, compute_), op,
          "cudaMemcpyAsync (host to device)");
  }
  // After the kernel that reads `args` was enqueued: its event frees it.
  void ReleaseArgs(const ArgSpan& args, const char* op) {
    cudaEvent_t e = nullptr;
    if (!free_arg_events_.empty()) {
      e = free_arg_events_.back();
      free_arg_events_.pop_back();
    } else {
      Check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync), op,
            "cudaEventCreateWithFlags");
    }
    Check(cudaEventRecord(e, compute_), op, "cudaEventRecord");
    arg_events_.emplace_back(++arg_tickets_, e);
    arg_ring_.Commit(args.offset, args.floats, arg_tickets_);
  }
  // Waits for the kernels of every span up to `ticket`.
  void WaitArgs(uint64_t ticket, const char* op) {
    while (!arg_events_.empty() && arg_events_.front().first <= ticket) {
      cudaEvent_t e = arg_events_.front().second;
      Check(cudaEventSynchronize(e), op, "cudaEventSynchronize");
      arg_events_.pop_front();
      free_arg_events_.push_back(e);
    }
    arg_ring_.Done(ticket);
  }

  // The kernels derive the width from (T, d, z); a caller's other width is
  // its bug, said before any launch.
  void CheckInteractionWidth(size_t T, size_t d, bool with_z, size_t width, const char* op) const {
    const size_t expected = cuda::InteractionWidth(T, d, with_z);
    if (width != expected) {
      throw std::invalid_argument(Where(op) + ": width " + std::to_string(width) + " is not the interaction's " +
                                  std::to_string(expected) + " (T " + std::to_string(T) + ", d " +
                                  std::to_string(d) + (with_z ? ", with z)" : ", without z)"));
    }
  }

  // A pinned host buffer grown to `bytes` (half again, at least); nothing
  // in flight uses the old one when it is called.
  void GrowPinned(void** buffer, size_t* capacity, size_t bytes, const char* op) {
    if (bytes <= *capacity) return;
    const size_t grown = std::max(bytes, *capacity + *capacity / 2);
    if (*buffer != nullptr) Check(cudaFreeHost(*buffer), op, "cudaFreeHost");
    *buffer = nullptr;
    *capacity = 0;
    Check(cudaHostAlloc(buffer, grown, cudaHostAllocDefault), op, "cudaHostAlloc (pinned buffer)");
    *capacity = grown;
  }

  // Makes this backend's device the calling thread's: kernels launch, and
  // events and buffers are made, on the thread's current device, and one
  // thread may drive backends of several devices (the lockstep driver, the
  // evaluation) or change between calls.
  void Select(const char* op) const { Check(cudaSetDevice(device_), op, "cudaSetDevice"); }

  std::string Where(const char* call) const {
    return "cuda backend (device " + std::to_string(device_) + (device_name_.empty() ? "" : ", " + device_name_) +
           "): " + call;
  }
  [[noreturn]] void Fail(const char* op, const char* call, const std::string& why) const {
    throw std::runtime_error(Where(call) + " failed in " + op + ": " + why);
  }
  void Check(cudaError_t err, const char* op, const char* call) const {
    if (err != cudaSuccess) Fail(op, call, CudaWhy(err));
  }

  template <class T>
  T* HostAt(size_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(host_buffer_) + offset);
  }
  template <class T>
  T* DeviceAt(size_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(device_buffer_) + offset);
  }

  // Selects the device for this thread and grows both staging buffers to
  // `bytes` (half as much again, so that slowly growing calls reallocate
  // rarely). Every earlier call has finished, so nothing uses the old ones.
  void Reserve(size_t bytes, const char* op) {
    Check(cudaSetDevice(device_), op, "cudaSetDevice");
    if (bytes <= capacity_) return;
    const size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
    if (device_buffer_ != nullptr) Check(cudaFree(device_buffer_), op, "cudaFree");
    if (host_buffer_ != nullptr) Check(cudaFreeHost(host_buffer_), op, "cudaFreeHost");
    device_buffer_ = host_buffer_ = nullptr;
    capacity_ = 0;
    Check(cudaMalloc(&device_buffer_, grown), op, "cudaMalloc (staging buffer)");
    Check(cudaHostAlloc(&host_buffer_, grown, cudaHostAllocDefault), op, "cudaHostAlloc (staging buffer)");
    capacity_ = grown;
  }

  // The staged inputs [0, bytes) to the device on the copy stream; the
  // compute stream waits for them.
  void CopyIn(size_t bytes, const char* op) {
    Check(cudaMemcpyAsync(device_buffer_, host_buffer_, bytes, cudaMemcpyHostToDevice, copy_), op,
          "cudaMemcpyAsync (host to device)");
    Check(cudaEventRecord(inputs_copied_, copy_), op, "cudaEventRecord");
    Check(cudaStreamWaitEvent(compute_, inputs_copied_, 0), op, "cudaStreamWaitEvent");
  }

  // Returns once the compute stream's work so far is done (its staged
  // inputs read).
  void WaitCompute(const char* op) {
    Check(cudaEventRecord(computed_, compute_), op, "cudaEventRecord");
    Check(cudaEventSynchronize(computed_), op, "cudaEventSynchronize");
  }

  // [offset, offset + bytes) back to the host once the compute stream's
  // work is done, and waits for that copy alone.
  void CopyOut(size_t offset, size_t bytes, const char* op) {
    Check(cudaEventRecord(computed_, compute_), op, "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_, computed_, 0), op, "cudaStreamWaitEvent");
    Check(cudaMemcpyAsync(HostAt<char>(offset), DeviceAt<char>(offset), bytes, cudaMemcpyDeviceToHost, copy_), op,
          "cudaMemcpyAsync (device to host)");
    Check(cudaEventRecord(outputs_copied_, copy_), op, "cudaEventRecord");
    Check(cudaEventSynchronize(outputs_copied_), op, "cudaEventSynchronize");
  }

  // The mirror of pinned memory p (AllocatePinned) for [p, p + floats).
  // REQUIRES: slot_mu_ held.
  float* Mirror(const float* p, size_t floats, const char* op) {
    auto it = pinned_.upper_bound(p);
    if (it != pinned_.begin()) {
      --it;
      if (p >= it->first && p + floats <= it->first + it->second.floats) return it->second.mirror + (p - it->first);
    }
    throw std::invalid_argument(Where(op) + ": staging not in memory of AllocatePinned");
  }
  void CopyUp(const float* device, const float* host, size_t bytes, const char* op) {
    Check(cudaMemcpyAsync(const_cast<float*>(device), host, bytes, cudaMemcpyHostToDevice, copy_), op,
          "cudaMemcpyAsync (host to device)");
  }
  // An event for a new ticket (REQUIRES: slot_mu_ held; blocking sync:
  // WaitStaged sleeps, no timing) or for BeginWait/EndWait (with timing).
  cudaEvent_t TicketEvent() {
    return Recycled(&free_events_, cudaEventDisableTiming | cudaEventBlockingSync, "ScatterSlots");
  }
  cudaEvent_t TimingEvent() { return Recycled(&timing_events_, cudaEventBlockingSync, "BeginWait"); }
  // A recycled event of `pool`, else a new one with `flags`.
  cudaEvent_t Recycled(std::vector<cudaEvent_t>* pool, unsigned flags, const char* op) {
    if (!pool->empty()) {
      cudaEvent_t e = pool->back();
      pool->pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    Check(cudaEventCreateWithFlags(&e, flags), op, "cudaEventCreateWithFlags");
    return e;
  }
  // Lazy Adam's bias corrections for steps 1 … kAdamTableSteps
  // (FillAdamCorrections: the CPU's bits), on the device once.
  const float* AdamTable(const RowUpdate& u) {
    if (adam_table_ == nullptr || adam_beta1_ != u.beta1 || adam_beta2_ != u.beta2) {
      std::vector<float> table(2 * size_t{kAdamTableSteps});
      cuda::FillAdamCorrections(u.beta1, u.beta2, kAdamTableSteps, table.data());
      if (adam_table_ == nullptr) adam_table_ = Allocate(table.size());
      Upload(adam_table_, table.data(), table.size());
      adam_beta1_ = u.beta1;
      adam_beta2_ = u.beta2;
    }
    return adam_table_;
  }

  // A row's step count never exceeds the batches it was trained in; past
  // 2^16 a row computes its correction with the device's powf (docs/gpu.md).
  static constexpr uint32_t kAdamTableSteps = uint32_t{1} << 16;

  const int device_;
  std::string device_name_, describe_;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t inputs_copied_ = nullptr, computed_ = nullptr, outputs_copied_ = nullptr;
  // Finish's own: a sync scheduler's thread calls it (AllReduceResident)
  // while the trainer's thread records outputs_copied_.
  cudaEvent_t finished_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* workspace_ = nullptr;
  void* device_buffer_ = nullptr;
  void* host_buffer_ = nullptr;  // pinned, the same size and layout
  size_t capacity_ = 0;
  cuda::BagCsr csr_;  // BagGradToUnique's and SumRowsByIndex's, kept for its capacity
  // The host-memory ops over the resident ones: their inputs or outputs
  // packed on the host and staged in device buffers.
  std::vector<float> packed_, packed_rows_;
  std::vector<uint32_t> by_index_;
  // Upload's and Download's pinned buffers; whether an upload's copy from
  // upload_host_ may still run (uploaded_ marks its end).
  void* upload_host_ = nullptr;
  void* download_host_ = nullptr;
  size_t upload_capacity_ = 0, download_capacity_ = 0;
  cudaEvent_t uploaded_ = nullptr;
  bool upload_pending_ = false;
  // UploadInputs' pinned buffers, taken in ticket order, each with the
  // event after its last copy (ticket 0: none yet). Four: the input
  // schedule has two batches' copies in flight at most.
  struct InputCopy {
    void* host = nullptr;
    size_t capacity = 0;
    cudaEvent_t done = nullptr;
    uint64_t ticket = 0;
  };
  static constexpr size_t kInputCopies = 4;
  InputCopy input_copies_[kInputCopies];
  uint64_t input_tickets_ = 0;
  // BceWithLogits's loss terms on the device and their host copy;
  // CrossBackward's per-sample Dot(g, x0). In this backend's memory: the
  // destructor frees them first.
  Buffer terms_, cross_gs_;
  std::vector<float> host_terms_;
  // The cache slots' copies (the partition's thread; see above).
  struct Pinned {
    float* mirror;
    size_t floats;
  };
  std::mutex slot_mu_;
  std::map<const float*, Pinned> pinned_;
  std::deque<std::pair<uint64_t, cudaEvent_t>> in_flight_;  // ScatterSlots' tickets, in order
  std::vector<cudaEvent_t> free_events_;
  uint64_t tickets_ = 0;
  cudaEvent_t slot_computed_ = nullptr, gathered_ = nullptr;
  // The argument ring (trainer's thread; see StageArgs). 1 MiB at first: a
  // table's pooling at 2048 samples of one-id bags stages about 24 KiB of
  // indices, so a batch's 26 tables fit several times over; a larger call
  // (a row update of many rows) grows it once, waiting for every span.
  static constexpr size_t kMinArgRingFloats = size_t{1} << 18;
  void* args_host_ = nullptr;  // pinned
  void* args_device_ = nullptr;
  size_t arg_ring_floats_ = 0;
  StagingRing arg_ring_{0};
  std::deque<std::pair<uint64_t, cudaEvent_t>> arg_events_;  // in ticket order
  std::vector<cudaEvent_t> free_arg_events_;
  uint64_t arg_tickets_ = 0;
  // ResidentBagGradToUnique's output before its download; BagGradToUnique's
  // and PoolSlots' staged input and output.
  Buffer unique_grad_, staged_grad_, staged_pooled_, staged_rows_;
  // The compute stream's timed waits (BeginWait): the open begin event of
  // each kind, the pairs not yet taken, recycled events.
  struct TimedWait {
    WaitFor what;
    cudaEvent_t begin, end;
  };
  cudaEvent_t open_waits_[2] = {nullptr, nullptr};
  std::vector<TimedWait> timed_waits_;
  std::vector<cudaEvent_t> timing_events_;
  // Lazy Adam's correction table (ApplyRowUpdate) and the betas it is for.
  float* adam_table_ = nullptr;
  float adam_beta1_ = 0.0f, adam_beta2_ = 0.0f;
};

}  // namespace

Result<std::unique_ptr<Backend>> MakeCudaBackend(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error for later callers
    return Status::Unavailable("cuda backend: cudaGetDeviceCount: " + CudaWhy(err));
  }
  if (device < 0 || device >= count) {
    return Status::Unavailable("cuda backend: no device " + std::to_string(device) + " (the CUDA runtime reports " +
                               std::to_string(count) + ")");
  }
  auto backend = std::make_unique<CudaBackend>(device);
  if (Status st = backend->Init(); !st.ok()) return st;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace actorrec::gpu
