// The log1p table for integer counts.
#include "data/readers/dense_transform.hpp"

#include <array>

namespace actorrec::data::readers {
namespace {

constexpr int64_t kTableSize = 4096;

const std::array<float, kTableSize>& Table() {
  // Built once, thread-safely, with the very function it stands in for, so
  // table and direct results are bit-identical.
  static const std::array<float, kTableSize> table = [] {
    std::array<float, kTableSize> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = ApplyDense(DenseTransform::kLog1p, static_cast<double>(i));
    return t;
  }();
  return table;
}

}  // namespace

float Log1pOfCount(int64_t x) {
  if (x <= 0) return 0.0f;
  if (x < kTableSize) return Table()[static_cast<size_t>(x)];
  return ApplyDense(DenseTransform::kLog1p, static_cast<double>(x));
}

}  // namespace actorrec::data::readers
