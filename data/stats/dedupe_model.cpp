// Expected distinct values per batch under RecD's session model.
#include "data/stats/dedupe_model.hpp"

#include "base/status.hpp"

namespace actorrec::data::stats {

double ExpectedUniqueBags(uint64_t first, uint64_t count, uint32_t session_length, double dup_prob) {
  ACTORREC_ASSERT(session_length >= 1 && dup_prob >= 0.0 && dup_prob <= 1.0, "session model out of range");
  if (count == 0) return 0.0;
  // Session starts strictly inside the range: multiples of S in (first, first + count).
  const uint64_t s = session_length;
  const uint64_t starts = 1 + (first + count - 1) / s - first / s;
  return static_cast<double>(starts) + static_cast<double>(count - starts) * (1.0 - dup_prob);
}

double ModelDedupeFactor(uint32_t session_length, double dup_prob) {
  return static_cast<double>(session_length) / ExpectedUniqueBags(0, session_length, session_length, dup_prob);
}

}  // namespace actorrec::data::stats
