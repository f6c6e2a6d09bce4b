// The NCCL collective's rank-order sum (gpu/cuda/rank_sum_ops.hpp), run on
// the host over every element of an all-gather's layout as the kernel does,
// against the CPU's rank-order sum: the shared-memory collective that one
// process's trainers sum through (itself held to Gloo's and the TLS
// collective's bits). Bitwise, over values of many binades and signed zeros.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gpu/cuda/rank_sum_ops.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {
namespace {

using testing::Inputs;
using testing::SameBits;

// The kernel's work on the host: the all-gather's layout (rank r at r·n),
// then RankOrderSumElement for every element.
std::vector<float> KernelSum(uint32_t w, uint64_t seed, size_t n) {
  std::vector<float> gathered;
  for (uint32_t r = 0; r < w; ++r) {
    const std::vector<float> x = Inputs(seed, r, n);
    gathered.insert(gathered.end(), x.begin(), x.end());
  }
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = cuda::RankOrderSumElement(gathered.data(), n, w, i);
  return out;
}

}  // namespace

TEST_CASE("the NCCL collective's rank-order sum element equals the CPU collectives' sum bitwise", "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u, 5u, 8u);
  const uint64_t seed = GENERATE(1u, 2u, 3u, 4u);
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{4097}}) {
    INFO("W " << w << " seed " << seed << " n " << n);
    CHECK(SameBits(KernelSum(w, seed, n), testing::SharedMemoryRankOrderSum(w, seed, n)));
  }
}

TEST_CASE("the rank-order sum element keeps signed zeros: -0 only when every rank gave -0", "[gpu]") {
  const float gathered[] = {-0.0f, -0.0f, 0.0f,   // rank 0
                            -0.0f, 0.0f, -0.0f,   // rank 1
                            -0.0f, -0.0f, -0.0f};  // rank 2
  CHECK(std::signbit(cuda::RankOrderSumElement(gathered, 3, 3, 0)));
  CHECK(!std::signbit(cuda::RankOrderSumElement(gathered, 3, 3, 1)));
  CHECK(!std::signbit(cuda::RankOrderSumElement(gathered, 3, 3, 2)));
}

TEST_CASE("the rank-order sum element adds in rank order, not in any other", "[gpu]") {
  // 1 + 2^-24 rounds to 1 (ties to even) twice in rank order, but 2^-24 +
  // 2^-24 first would be exact and survive.
  const float tiny = std::ldexp(1.0f, -24);
  const float gathered[] = {1.0f, tiny, tiny};
  CHECK(cuda::RankOrderSumElement(gathered, 1, 3, 0) == 1.0f);
}

}  // namespace actorrec::gpu
