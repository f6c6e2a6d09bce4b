// Embedding rows' initial weights: a function of (seed, table, row) alone,
// uniform in ±sqrt(1 / table_rows), first-order weight 0.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/init.hpp"

namespace actorrec::models {

TEST_CASE("row initialization depends on (seed, t, r) only", "[models]") {
  float a[5], b[5];
  InitRowWeights(1, 2, 3, 100, 4, 5, a);
  InitRowWeights(1, 2, 3, 100, 4, 5, b);
  CHECK(std::equal(a, a + 5, b));
  CHECK(a[4] == 0.0f);
  InitRowWeights(1, 2, 4, 100, 4, 5, b);
  CHECK_FALSE(std::equal(a, a + 4, b));
  InitRowWeights(1, 3, 3, 100, 4, 5, b);
  CHECK_FALSE(std::equal(a, a + 4, b));
  InitRowWeights(2, 2, 3, 100, 4, 5, b);
  CHECK_FALSE(std::equal(a, a + 4, b));
}

TEST_CASE("row initialization is uniform within the DLRM bound", "[models]") {
  for (uint64_t rows : {1ull, 7ull, 10000ull, 40000000ull}) {
    const double bound = std::sqrt(1.0 / double(rows));
    double sum = 0, squares = 0, largest = 0;
    size_t count = 0;
    std::vector<float> w(16);
    for (uint64_t r = 0; r < 2000; ++r) {
      InitRowWeights(9, static_cast<uint32_t>(r), r * 7919 % rows, rows, 16, 16, w.data());
      for (float x : w) {
        largest = std::max(largest, std::fabs(double(x)));
        sum += x / bound, squares += (x / bound) * (x / bound), ++count;
      }
    }
    INFO("rows " << rows);
    CHECK(largest <= bound);
    CHECK(std::fabs(sum / count) < 0.02);
    CHECK(squares / count == Approx(1.0 / 3.0).epsilon(0.03));  // the variance of U(−1, 1)
  }
}

}  // namespace actorrec::models
