// gpu::ProcessRanks: a process's collectives made together by the first
// rank that asks, each rank then taking its own (how one process's NCCL
// ranks are connected in one group, gpu/nccl_collective.hpp). Shared-memory
// collectives stand in for NCCL's: the hand-out is the same.
#include "gpu/process_ranks.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gpu/shared_memory_collective.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {

using Catch::Matchers::Contains;

TEST_CASE("a process's ranks are made once, together, and each rank takes its own from its thread", "[gpu]") {
  const std::vector<uint32_t> ranks = {2, 3, 4};  // a member's ranks of a group of 5
  std::atomic<int> connects{0};
  auto group = std::make_shared<SharedMemoryGroup>(3, std::chrono::milliseconds(10000));
  ProcessRanks made(ranks, [&]() -> Result<std::vector<std::unique_ptr<Collective>>> {
    ++connects;
    std::vector<std::unique_ptr<Collective>> all;
    for (uint32_t i = 0; i < 3; ++i) {
      auto c = ConnectSharedMemory(group, i);
      if (!c.ok()) return c.status();
      all.push_back(std::move(c).value());
    }
    return all;
  });
  std::vector<uint32_t> got_rank(3, 99);
  std::vector<std::vector<float>> sums(3);
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto c = made.Take(ranks[i]);
      if (!c.ok()) return;
      got_rank[i] = (*c)->rank();  // the group's rank i: the i-th of ranks
      std::vector<float> x = testing::Inputs(11, i, 100);
      if ((*c)->AllReduceRankOrder(x.data(), x.size()).ok()) sums[i] = std::move(x);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(connects.load() == 1);
  const std::vector<float> want = testing::SharedMemoryRankOrderSum(3, 11, 100);
  for (uint32_t i = 0; i < 3; ++i) {
    CHECK(got_rank[i] == i);
    CHECK(testing::SameBits(sums[i], want));
  }
  const auto again = made.Take(3);
  CHECK(again.status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(again.status().message(), Contains("rank 3's collective was taken already"));
  CHECK_THAT(made.Take(1).status().message(), Contains("rank 1 is not one of this process's"));
}

TEST_CASE("a failed connection of a process's ranks is every rank's, and is not retried", "[gpu]") {
  int connects = 0;
  ProcessRanks made({0, 1}, [&]() -> Result<std::vector<std::unique_ptr<Collective>>> {
    ++connects;
    return Status::Unavailable("nccl rank 0 of 2 (device 0): ncclCommInitRankConfig: unhandled cuda error");
  });
  for (uint32_t r : {1u, 0u}) {
    const auto got = made.Take(r);
    CHECK(got.status().code() == Status::Code::kUnavailable);
    CHECK_THAT(got.status().message(), Contains("ncclCommInitRankConfig"));
  }
  CHECK(connects == 1);
  // A maker that returns the wrong number of collectives is a bug reported
  // as a status, not a crash.
  ProcessRanks short_of({0, 1}, []() -> Result<std::vector<std::unique_ptr<Collective>>> {
    return std::vector<std::unique_ptr<Collective>>{};
  });
  CHECK_THAT(short_of.Take(0).status().message(), Contains("0 collectives made for 2 ranks"));
}

}  // namespace actorrec::gpu
