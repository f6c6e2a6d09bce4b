// The host defaults of the Backend's optional ops (backend.hpp).
#include "gpu/backend.hpp"

#include <algorithm>
#include <cstring>

namespace actorrec::gpu {

void Backend::GatherRows(const float* src, size_t src_stride, size_t width, const uint32_t* index, size_t n,
                         float* out, size_t out_stride) {
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(out + i * out_stride, src + size_t{index[i]} * src_stride, width * sizeof(float));
  }
}

void Backend::SumRowsByIndex(const float* in, size_t in_stride, size_t width, const uint32_t* index, size_t n,
                             size_t groups, float* out, size_t out_stride) {
  for (size_t u = 0; u < groups; ++u) std::fill(out + u * out_stride, out + u * out_stride + width, -0.0f);
  // Ascending i: each group's sum adds its rows in sample order.
  for (size_t i = 0; i < n; ++i) {
    float* acc = out + size_t{index[i]} * out_stride;
    const float* row = in + i * in_stride;
    for (size_t j = 0; j < width; ++j) acc[j] += row[j];
  }
}

}  // namespace actorrec::gpu
