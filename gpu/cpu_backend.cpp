#include "gpu/cpu_backend.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "base/vector_clones.hpp"

#ifdef ACTORREC_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
extern "C" void omp_set_num_threads(int);  // libgomp, oneDNN's threading runtime in Debian's build
#endif

namespace actorrec::gpu {
namespace {

// Each trainer owns one core: a BLAS's own threads would compete with the
// other trainers' GEMMs and make per-trainer timing meaningless. OpenBLAS's
// setting is global.
void UseOneOpenBlasThread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

#ifdef ACTORREC_HAVE_DNNL
// OpenMP's thread count is per calling thread, and trainers are threads:
// each one sets it before its first oneDNN call.
void UseOneOmpThreadOnThisThread() {
  thread_local bool done = false;
  if (!done) {
    omp_set_num_threads(1);
    done = true;
  }
}

std::string DnnlIsaName() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx2: return "avx2";
    default: return "isa " + std::to_string(static_cast<int>(dnnl_get_effective_cpu_isa()));
  }
}
#endif

// The row loops. Separate pointers that never alias (output rows vs table
// rows or gradients), so the compiler vectorizes over j without run-time
// overlap checks; each lane's result is the same scalar operation, so the
// vector width never changes a bit.
inline void CopyRow(float* __restrict out, const float* __restrict in, size_t width) {
  for (size_t j = 0; j < width; ++j) out[j] = in[j];
}
inline void AddRow(float* __restrict acc, const float* __restrict in, size_t width) {
  for (size_t j = 0; j < width; ++j) acc[j] += in[j];
}
inline void AddScaledRow(float* __restrict acc, const float* __restrict in, float scale, size_t width) {
  for (size_t j = 0; j < width; ++j) acc[j] += in[j] * scale;  // product rounded, then added (no FMA)
}
inline void ScaleRow(float* row, float scale, size_t width) {
  for (size_t j = 0; j < width; ++j) row[j] *= scale;
}

// The row operations at a width known at compile time: blocks of 16 floats
// as GCC vectors (one AVX-512 register, two AVX2, four SSE). With the width
// known only at run time GCC turns CopyRow into a call to memmove for every
// row (64 bytes at width 16); with a constant width and plain loops it
// unrolls the adds into scalar ones. Lane j does what the scalar loop does to
// element j, so the bits are the same.
using Block = float __attribute__((vector_size(64)));
constexpr size_t kBlock = sizeof(Block) / sizeof(float);

// Each block is copied in and out with memcpy (rows need not be aligned);
// no function takes or returns a Block, whose ABI differs between the clones.
template <size_t kWidth>
struct FixedRow {
  static_assert(kWidth % kBlock == 0);
  static void Copy(float* out, const float* in) { std::memcpy(out, in, kWidth * sizeof(float)); }
  static void Add(float* acc, const float* in) {
    for (size_t c = 0; c < kWidth; c += kBlock) {
      Block a, b;
      std::memcpy(&a, acc + c, sizeof a);
      std::memcpy(&b, in + c, sizeof b);
      a += b;
      std::memcpy(acc + c, &a, sizeof a);
    }
  }
  static void AddScaled(float* acc, const float* in, float scale) {
    for (size_t c = 0; c < kWidth; c += kBlock) {
      Block a, b;
      std::memcpy(&a, acc + c, sizeof a);
      std::memcpy(&b, in + c, sizeof b);
      a += b * scale;  // product rounded, then added (no FMA)
      std::memcpy(acc + c, &a, sizeof a);
    }
  }
  static void Scale(float* row, float scale) {
    for (size_t c = 0; c < kWidth; c += kBlock) {
      Block a;
      std::memcpy(&a, row + c, sizeof a);
      a *= scale;
      std::memcpy(row + c, &a, sizeof a);
    }
  }
};

// The same at run time.
struct AnyRow {
  size_t width;
  void Copy(float* out, const float* in) const { CopyRow(out, in, width); }
  void Add(float* acc, const float* in) const { AddRow(acc, in, width); }
  void AddScaled(float* acc, const float* in, float scale) const { AddScaledRow(acc, in, scale, width); }
  void Scale(float* row, float scale) const { ScaleRow(row, scale, width); }
};

template <class Row>
ACTORREC_VECTOR_CLONES void PoolRows(Row row_ops, size_t width, const float* rows, size_t row_stride,
                                     const SlotBags& bags, Pooling pooling, float* out, size_t out_stride) {
  auto row_of = [&](uint32_t p) { return rows + size_t{bags.unique_slots[bags.inverse[p]]} * row_stride; };
  for (size_t i = 0; i < bags.samples; ++i) {
    float* o = out + i * out_stride;
    const uint32_t begin = bags.offsets[i], end = bags.offsets[i + 1];
    if (begin == end) {
      std::fill(o, o + width, 0.0f);
      continue;
    }
    // The sum starts from the first row itself, not from +0.0f, so that a
    // one-row bag pools to that row's exact bits (−0.0f included).
    row_ops.Copy(o, row_of(begin));
    for (uint32_t p = begin + 1; p < end; ++p) row_ops.Add(o, row_of(p));
    if (pooling == Pooling::kMean) row_ops.Scale(o, 1.0f / static_cast<float>(end - begin));
  }
}

template <class Row>
ACTORREC_VECTOR_CLONES void GradToUnique(Row row_ops, size_t width, const float* pooled_grad, size_t in_stride,
                                         const SlotBags& bags, Pooling pooling, float* grad_unique) {
  std::fill(grad_unique, grad_unique + bags.unique_count * width, -0.0f);
  // Samples in order, and positions in order within a sample: each unique
  // row receives its contributions in ascending p.
  for (size_t i = 0; i < bags.samples; ++i) {
    const float* g = pooled_grad + i * in_stride;
    const uint32_t begin = bags.offsets[i], end = bags.offsets[i + 1];
    if (pooling == Pooling::kMean) {
      const float scale = 1.0f / static_cast<float>(end - begin);  // unused when the bag is empty
      for (uint32_t p = begin; p < end; ++p) row_ops.AddScaled(grad_unique + size_t{bags.inverse[p]} * width, g, scale);
    } else {
      for (uint32_t p = begin; p < end; ++p) row_ops.Add(grad_unique + size_t{bags.inverse[p]} * width, g);
    }
  }
}

// Runs the loop `run` with the row operations for `width`: fixed for the
// usual embedding widths (multiples of 16 floats up to 128), else at run time.
template <class Run>
void WithRowOps(size_t width, Run run) {
  switch (width) {
    case 16: return run(FixedRow<16>{});
    case 32: return run(FixedRow<32>{});
    case 64: return run(FixedRow<64>{});
    case 128: return run(FixedRow<128>{});
    default: return run(AnyRow{width});
  }
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuGemmLibrary library) : library_(library) { UseOneOpenBlasThread(); }

  std::string name() const override {
#ifdef ACTORREC_HAVE_DNNL
    if (library_ == CpuGemmLibrary::kOneDnn) return "cpu (oneDNN sgemm " + DnnlIsaName() + ", 1 thread per trainer)";
#endif
    return std::string("cpu (OpenBLAS sgemm ").append(openblas_get_corename()).append(", 1 thread per trainer)");
  }

  void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    if (m == 0 || n == 0) return;
    if (k == 0) return GemmWithEmptyK(m, n, beta, c, ldc);
#ifdef ACTORREC_HAVE_DNNL
    if (library_ == CpuGemmLibrary::kOneDnn) {
      UseOneOmpThreadOnThisThread();
      const dnnl_status_t status =
          dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      ACTORREC_ASSERT(status == dnnl_success, "dnnl_sgemm rejected its arguments");
      return;
    }
#endif
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
  }

  void PoolBySlot(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                  float* out, size_t out_stride) override {
    WithRowOps(width, [&](auto row_ops) { PoolRows(row_ops, width, rows, row_stride, bags, pooling, out, out_stride); });
  }

  void BagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                       Pooling pooling, float* grad_unique) override {
    WithRowOps(width, [&](auto row_ops) {
      GradToUnique(row_ops, width, pooled_grad, in_stride, bags, pooling, grad_unique);
    });
  }

  // The dedup ops with the fixed-width row loops: the host defaults'
  // results bit for bit (the same adds in the same order); at width 32 the
  // dedup'd embedding part of recd_bench at S = 16 took 0.45-0.61 ms
  // instead of 0.65-0.87 ms with the defaults' scalar loops.
  void GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n, float* out,
                  size_t out_stride) override {
    WithRowOps(width, [&](auto row_ops) {
      for (size_t i = 0; i < n; ++i) row_ops.Copy(out + i * out_stride, src + size_t{index[i]} * src_stride);
    });
  }

  void SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                      size_t groups, float* out, size_t out_stride) override {
    for (size_t u = 0; u < groups; ++u) std::fill(out + u * out_stride, out + u * out_stride + width, -0.0f);
    WithRowOps(width, [&](auto row_ops) {
      for (size_t i = 0; i < n; ++i) row_ops.Add(out + size_t{index[i]} * out_stride, in + i * in_stride);
    });
  }

 private:
  CpuGemmLibrary library_;
};

}  // namespace

bool CpuBackendHasOneDnn() {
#ifdef ACTORREC_HAVE_DNNL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Backend> MakeCpuBackend() {
  return std::make_unique<CpuBackend>(CpuBackendHasOneDnn() ? CpuGemmLibrary::kOneDnn : CpuGemmLibrary::kOpenBlas);
}

Result<std::unique_ptr<Backend>> MakeCpuBackend(CpuGemmLibrary library) {
  if (library == CpuGemmLibrary::kOneDnn && !CpuBackendHasOneDnn()) {
    return Status::NotSupported("cpu backend: this build has no oneDNN (install libdnnl-dev and reconfigure)");
  }
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(library));
}

}  // namespace actorrec::gpu
