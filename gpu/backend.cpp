// gpu::Backend's defaults: memory and model ops on the host (the CPU
// backend's), running gpu/cpu_ops.hpp's loops, and
// the host versions of the dedup groups' two ops (GatherRows, SumRowsByIndex).
#include "gpu/backend.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "gpu/cuda/optimizer_ops.hpp"
#include "gpu/cuda/rank_sum_ops.hpp"

namespace actorrec::gpu {
namespace {

// The interaction's scratch, per thread (one trainer computes on one
// thread at a time; it grows to the largest shape seen).
std::vector<float>& Scratch(size_t floats) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < floats) scratch.resize(floats);
  return scratch;
}

}  // namespace

float* Backend::Allocate(size_t floats) { return new float[floats]; }
void Backend::Free(float* p) { delete[] p; }
void Backend::Upload(float* dst, const float* host, size_t floats) {
  if (floats > 0) std::memcpy(dst, host, floats * sizeof(float));
}
void Backend::Download(float* host, const float* src, size_t floats) {
  if (floats > 0) std::memcpy(host, src, floats * sizeof(float));
}

void Backend::BiasAdd(float* out, const float* bias, size_t n, int width, bool relu) {
  cpu::AddBias(out, bias, n, width, relu);
}
void Backend::ReluGrad(const float* go, const float* out, float* gk, size_t count) {
  cpu::ReluGrad(go, out, gk, count);
}
void Backend::BiasGrad(const float* g, size_t n, int width, float* db) { cpu::BiasGrad(g, n, width, db); }
double Backend::BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit) {
  return cpu::BceWithLogits(logits, labels, n, scale, dlogit);
}
void Backend::InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width,
                                 float* r) {
  std::vector<float>& columns = Scratch(cpu::InteractionColumnsFloats(T, d, z != nullptr));
  cpu::InteractionForward(z, pooled, n, T, d, width, r, columns.data());
}
void Backend::InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                                  size_t width, float* dz, float* dpooled) {
  std::vector<float>& G = Scratch(T * T);
  cpu::InteractionBackward(dr, z, pooled, n, T, d, width, dz, dpooled, G.data());
}

void Backend::DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d,
                        size_t w, float* x) {
  cpu::DeepInput(dense, pooled, n, dd, T, C, d, w, x);
}
void Backend::WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                             const float* bias, bool fm, float* sums, float* logits) {
  cpu::WideDeepLogits(deep, pooled, n, T, C, d, bias, fm, sums, logits);
}
void Backend::WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit,
                                 size_t n, size_t dd, size_t T, size_t C, size_t d, float* pooled_grad) {
  cpu::WideDeepPooledGrad(dx, pooled, sums, dlogit, n, dd, T, C, d, pooled_grad);
}

void Backend::CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0,
                           float* s, float* next) {
  cpu::CrossForward(x0, x, w, b, n, d0, s, next);
}
void Backend::DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0,
                        size_t hw, float* logits) {
  cpu::DcnLogits(fw, fb, xl, h, n, d0, hw, logits);
}
void Backend::DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n,
                               size_t d0, size_t hw, float* gfw, float* gfb, float* g, float* dh) {
  cpu::DcnFinalBackward(dlogit, fw, xl, h, n, d0, hw, gfw, gfb, g, dh);
}
void Backend::CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0,
                            float* g, float* dx0, float* gw, float* gb) {
  cpu::CrossBackward(x0, x, w, s, n, d0, g, dx0, gw, gb);
}
void Backend::DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad) {
  cpu::DcnPooledGrad(g, dx0, n, d0, dd, pooled_grad);
}
void Backend::SetZero(float* p, size_t floats) { std::fill(p, p + floats, 0.0f); }

void Backend::CopyResident(float* dst, const float* src, size_t floats) {
  if (floats > 0) std::memmove(dst, src, floats * sizeof(float));
}
void Backend::RankOrderSum(const float* gathered, size_t n, uint32_t ranks, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = cuda::RankOrderSumElement(gathered, n, ranks, i);
}

void HostGatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n, float* out,
                    size_t out_stride) {
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(out + i * out_stride, src + size_t{index[i]} * src_stride, width * sizeof(float));
  }
}

void HostSumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                        size_t groups, float* out, size_t out_stride) {
  for (size_t u = 0; u < groups; ++u) std::fill(out + u * out_stride, out + u * out_stride + width, -0.0f);
  // Ascending i: each group's sum adds its rows in sample order.
  for (size_t i = 0; i < n; ++i) {
    float* acc = out + size_t{index[i]} * out_stride;
    const float* row = in + i * in_stride;
    for (size_t j = 0; j < width; ++j) acc[j] += row[j];
  }
}

void Backend::GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                         float* out, size_t out_stride) {
  HostGatherRows(src, src_stride, width, index, n, out, out_stride);
}

void Backend::SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                             size_t groups, float* out, size_t out_stride) {
  HostSumRowsByIndex(in, in_stride, width, index, n, groups, out, out_stride);
}

// ---- The cache slots' defaults, on the host.

float* Backend::AllocatePinned(size_t floats) { return new float[floats == 0 ? 1 : floats]; }
void Backend::FreePinned(float* p) { delete[] p; }

uint64_t Backend::ScatterSlots(const float* staged, const uint32_t* slots, size_t n, size_t row_floats, float* rows,
                               size_t row_stride) {
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(rows + size_t{slots[i]} * row_stride, staged + i * row_floats, row_floats * sizeof(float));
  }
  return 0;
}

void Backend::GatherSlots(const float* rows, size_t row_stride, const uint32_t* slots, size_t n, size_t row_floats,
                          float* staged) {
  HostGatherRows(rows, row_stride, row_floats, slots, n, staged, row_floats);
}

void Backend::WaitStaged(uint64_t) {}
void Backend::ComputeAfter(uint64_t) {}

void Backend::ApplyRowUpdate(float* rows, size_t row_stride, const uint32_t* slots, size_t n, const float* grads,
                             const RowUpdate& u) {
  const uint32_t width = u.width;
  const cuda::AdamSettings adam{u.lr, u.beta1, u.beta2, u.eps};
  for (size_t i = 0; i < n; ++i) {
    float* row = rows + size_t{slots[i]} * row_stride;
    const float* g = grads + i * width;
    switch (u.kind) {
      case RowUpdateKind::kSgd:
        for (uint32_t j = 0; j < width; ++j) row[j] = cuda::SgdUpdate(row[j], g[j], u.lr);
        break;
      case RowUpdateKind::kAdagrad:
        for (uint32_t j = 0; j < width; ++j) cuda::AdagradUpdate(row + j, row + width + j, g[j], u.lr, u.eps);
        break;
      case RowUpdateKind::kRowwiseAdagrad: cuda::RowwiseAdagradRow(row, g, width, u.lr, u.eps); break;
      case RowUpdateKind::kAdam: cuda::RowAdamRow(row, g, width, adam, nullptr, 0); break;
    }
  }
}

}  // namespace actorrec::gpu
