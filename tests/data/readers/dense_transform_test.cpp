// Tests of the dense transforms.
#include "data/readers/dense_transform.hpp"

#include <catch2/catch.hpp>

#include <cmath>

namespace actorrec::data::readers {
namespace {

TEST_CASE("log1p clamps negatives to 0 and the count table equals the direct transform", "[data]") {
  CHECK(ApplyDense(DenseTransform::kLog1p, -5) == 0.0f);
  CHECK(ApplyDense(DenseTransform::kLog1p, 0) == 0.0f);
  CHECK(ApplyDense(DenseTransform::kLog1p, std::exp(2.0) - 1) == Approx(2.0f));
  CHECK(ApplyDense(DenseTransform::kNone, -5) == -5.0f);
  for (int64_t x = -3; x < 5000; ++x) {
    REQUIRE(Log1pOfCount(x) == ApplyDense(DenseTransform::kLog1p, static_cast<double>(x)));
  }
  CHECK(Log1pOfCount(int64_t{1} << 40) == ApplyDense(DenseTransform::kLog1p, std::ldexp(1.0, 40)));
}

}  // namespace
}  // namespace actorrec::data::readers
