// The per-element work of the cache slots' copy kernels
// (gpu/cuda/slot_kernels.cuh): scatter staged rows into their slots and
// gather slots into staging, as gpu::Backend::ScatterSlots and GatherSlots'
// host defaults do, and the row gather of GatherRows. Element e of a call is (row e / row_floats, column
// e % row_floats), so consecutive threads touch consecutive floats of a row.
// g++ compiles these for the host tests (tests/gpu/slot_ops_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/hd.hpp"

namespace actorrec::gpu::cuda {

// rows[slots[i]·row_stride + j] = staged[e], e = i·row_floats + j.
ACTORREC_HD void ScatterSlotElement(const float* staged, const uint32_t* slots, size_t row_floats, float* rows,
                                    size_t row_stride, size_t e) {
  const size_t i = e / row_floats, j = e % row_floats;
  rows[size_t{slots[i]} * row_stride + j] = staged[e];
}

// out[i·out_stride + j] = src[index[i]·src_stride + j], e = i·width + j:
// Backend::GatherRows' element (a dedup group's tuples expanded to their
// samples, gpu/backend.hpp).
ACTORREC_HD void GatherRowElement(const float* src, size_t src_stride, const uint32_t* index, size_t width,
                                  float* out, size_t out_stride, size_t e) {
  const size_t i = e / width, j = e % width;
  out[i * out_stride + j] = src[size_t{index[i]} * src_stride + j];
}

// staged[e] = rows[slots[i]·row_stride + j], e = i·row_floats + j.
ACTORREC_HD void GatherSlotElement(const float* rows, size_t row_stride, const uint32_t* slots, size_t row_floats,
                                   float* staged, size_t e) {
  GatherRowElement(rows, row_stride, slots, row_floats, staged, row_floats, e);
}

}  // namespace actorrec::gpu::cuda
