#include "data/batches/dense_dedup.hpp"

#include <algorithm>
#include <cstring>

namespace actorrec::data {
namespace {

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

uint64_t RowHash(const float* row, size_t width, uint32_t tuple) {
  uint64_t h = Mix(tuple + 0x9e3779b97f4a7c15ULL);
  for (size_t j = 0; j < width; ++j) {
    uint32_t bits;
    std::memcpy(&bits, row + j, sizeof(bits));
    h = Mix(h ^ bits);
  }
  return h;
}

}  // namespace

void DenseDedup::Run(const float* dense, size_t n, size_t width, const uint32_t* tuple_of) {
  inverse_.resize(n);
  first_.clear();
  if (n == 0) return;
  size_t tuples = 1;
  if (tuple_of != nullptr) tuples = size_t{*std::max_element(tuple_of, tuple_of + n)} + 1;
  last_of_tuple_.assign(tuples, UINT32_MAX);
  size_t cells = 16;
  while (cells < 2 * n) cells *= 2;
  cells_.assign(cells, UINT32_MAX);
  const size_t bytes = width * sizeof(float);
  auto same = [&](size_t i, uint32_t u, uint32_t tuple) {
    const uint32_t f = first_[u];
    return (tuple_of == nullptr || tuple_of[f] == tuple) && std::memcmp(dense + f * width, dense + i * width, bytes) == 0;
  };
  for (size_t i = 0; i < n; ++i) {
    const uint32_t tuple = tuple_of != nullptr ? tuple_of[i] : 0;
    const uint32_t last = last_of_tuple_[tuple];
    if (last != UINT32_MAX && same(i, last, tuple)) {
      inverse_[i] = last;
      continue;
    }
    // Linear probing over every distinct row so far.
    size_t c = RowHash(dense + i * width, width, tuple) & (cells - 1);
    uint32_t u = UINT32_MAX;
    while (cells_[c] != UINT32_MAX) {
      if (same(i, cells_[c], tuple)) {
        u = cells_[c];
        break;
      }
      c = (c + 1) & (cells - 1);
    }
    if (u == UINT32_MAX) {
      u = static_cast<uint32_t>(first_.size());
      first_.push_back(static_cast<uint32_t>(i));
      cells_[c] = u;
    }
    last_of_tuple_[tuple] = u;
    inverse_[i] = u;
  }
}

}  // namespace actorrec::data
