#include "gpu/cpu_backend.hpp"

#include <cblas.h>

#include <algorithm>
#include <mutex>

namespace actorrec::gpu {
namespace {

// Each trainer owns one core: OpenBLAS's own threads would compete with the
// other trainers' GEMMs and make per-trainer timing meaningless.
void UseOneBlasThread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() { UseOneBlasThread(); }
  std::string name() const override { return "cpu (OpenBLAS sgemm, 1 thread per trainer)"; }

  void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    if (m == 0 || n == 0) return;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
  }

  void PoolBySlot(const float* rows, size_t row_stride, size_t width, const SlotBags& bags, Pooling pooling,
                  float* out, size_t out_stride) override {
    for (size_t i = 0; i < bags.samples; ++i) {
      float* o = out + i * out_stride;
      const uint32_t begin = bags.offsets[i], end = bags.offsets[i + 1];
      if (begin == end) {
        std::fill(o, o + width, 0.0f);
        continue;
      }
      const float* first = rows + size_t{bags.unique_slots[bags.inverse[begin]]} * row_stride;
      std::copy(first, first + width, o);
      for (uint32_t p = begin + 1; p < end; ++p) {
        const float* r = rows + size_t{bags.unique_slots[bags.inverse[p]]} * row_stride;
        for (size_t j = 0; j < width; ++j) o[j] += r[j];
      }
      if (pooling == Pooling::kMean) {
        const float scale = 1.0f / static_cast<float>(end - begin);
        for (size_t j = 0; j < width; ++j) o[j] *= scale;
      }
    }
  }

  void BagGradToUnique(const float* pooled_grad, size_t in_stride, size_t width, const SlotBags& bags,
                       Pooling pooling, float* grad_unique) override {
    std::fill(grad_unique, grad_unique + bags.unique_count * width, -0.0f);
    for (size_t i = 0; i < bags.samples; ++i) {
      const float* g = pooled_grad + i * in_stride;
      const uint32_t begin = bags.offsets[i], end = bags.offsets[i + 1];
      if (pooling == Pooling::kMean && end > begin) {
        const float scale = 1.0f / static_cast<float>(end - begin);
        for (uint32_t p = begin; p < end; ++p) {
          float* u = grad_unique + size_t{bags.inverse[p]} * width;
          for (size_t j = 0; j < width; ++j) u[j] += g[j] * scale;
        }
      } else {
        for (uint32_t p = begin; p < end; ++p) {
          float* u = grad_unique + size_t{bags.inverse[p]} * width;
          for (size_t j = 0; j < width; ++j) u[j] += g[j];
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace actorrec::gpu
