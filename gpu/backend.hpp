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

  // The two ops of deduplicated feature groups (RecD's IKJT): a group's
  // bags are pooled once per distinct tuple, expanded to the samples with
  // GatherRows, and the samples' gradients summed back per tuple with
  // SumRowsByIndex before BagGradToUnique. Optional: the defaults run on
  // the host (gpu/backend.cpp), right for a backend whose buffers are host
  // memory; a device backend overrides them.

  // Row gather: out[i·out_stride + j] = src[index[i]·src_stride + j] for
  // i < n, j < width.
  virtual void GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                          float* out, size_t out_stride);

  // Segmented sum by index, the backward of GatherRows: for each u < groups,
  //   out[u·out_stride + j] = Σ_{i < n : index[i] = u, ascending i} in[i·in_stride + j]
  // (a fixed order: the result never depends on threads); −0.0f for a u no
  // i names. REQUIRES: every index[i] < groups.
  virtual void SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                              size_t groups, float* out, size_t out_stride);
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

// OpenBLAS (or the faster library measured by tools/bench/gemm_bench) and
// vectorized loops; single-threaded: every trainer owns one core's work.
std::unique_ptr<Backend> MakeCpuBackend();

}  // namespace actorrec::gpu
