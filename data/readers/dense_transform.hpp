// Dense feature preprocessing as practitioners do it.
#pragma once

#include <cmath>
#include <cstdint>

namespace actorrec::data::readers {

enum class DenseTransform {
  kNone,   // the value as read
  kLog1p,  // log(1 + max(x, 0)): Criteo's counts span 0..1e6+ and a few are
           // negative (-1, -2 in I2); the DLRM reference clamps then logs.
};

inline float ApplyDense(DenseTransform transform, double x) {
  if (transform == DenseTransform::kLog1p) return static_cast<float>(std::log1p(x > 0 ? x : 0.0));
  return static_cast<float>(x);
}

// ApplyDense(kLog1p, x) for an integer count, from a table for small
// counts: log1p was a fifth of a Criteo parse (perf), and most Criteo
// counts are below the table's 4096 entries (16 KiB, stays in L1/L2).
float Log1pOfCount(int64_t x);

}  // namespace actorrec::data::readers
