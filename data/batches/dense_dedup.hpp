// The distinct dense rows of a slice within a dedup group's tuples: what
// lets DLRM's bottom MLP run once per distinct (tuple, dense row) instead of
// once per sample (RecD's "compute per unique tuple", a group with
// `dense = true`, docs/own_data.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace actorrec::data {

// Keeps its scratch (a hash table of 2·n cells at least) between calls.
class DenseDedup {
 public:
  // Sample i's dense row is dense[i·width …]; tuple_of[i] its tuple in a
  // dedup group (null: one tuple for every sample). Two samples share a
  // distinct row only when their tuples and every float of their rows are
  // equal bitwise (so −0.0f and +0.0f differ, and a NaN equals its own
  // bits). Distinct rows are numbered in order of first use: inverse()[i]
  // is sample i's, first()[u] the first sample with row u; the result
  // depends on nothing but the input. O(n): one comparison with the
  // tuple's last distinct row per sample (a session repeats its user's
  // row), a hash lookup only where that differs.
  void Run(const float* dense, size_t n, size_t width, const uint32_t* tuple_of);

  const std::vector<uint32_t>& inverse() const { return inverse_; }
  const std::vector<uint32_t>& first() const { return first_; }
  size_t distinct() const { return first_.size(); }

 private:
  std::vector<uint32_t> inverse_, first_;
  std::vector<uint32_t> last_of_tuple_;  // a tuple's latest distinct row (UINT32_MAX: none yet)
  std::vector<uint32_t> cells_;          // open addressing: a distinct row's number, UINT32_MAX empty
};

}  // namespace actorrec::data
