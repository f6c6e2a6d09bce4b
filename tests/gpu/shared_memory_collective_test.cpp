// The shared-memory collective: the rank-order all-reduce bitwise against a
// sequential loop over the ranks and against Gloo on the same inputs (a
// one-process run must equal a cluster run), broadcast, barrier, and the
// failures that must come back as statuses.
//
// Catch2's assertions are not thread-safe: rank threads only record what they
// saw, and the test thread checks it after joining them.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/shared_memory_collective.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {
namespace {

using testing::Inputs;
using testing::SameBits;

// Runs body(rank, collective) on `w` threads of one group.
void RunShared(uint32_t w, std::chrono::milliseconds timeout, const std::function<void(uint32_t, Collective&)>& body) {
  auto group = std::make_shared<SharedMemoryGroup>(w, timeout);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < w; ++r) {
    threads.emplace_back([&, r] {
      auto c = ConnectSharedMemory(group, r);
      if (c.ok()) body(r, **c);
    });
  }
  for (auto& t : threads) t.join();
}

const std::vector<size_t> kSizes = {0, 1, 2, 3, 7, 64, 1000, 4097, 100003};

}  // namespace

TEST_CASE("the shared-memory all-reduce equals the sequential rank-order sum and Gloo's, bitwise", "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u, 4u);
  const uint64_t seed = GENERATE(1u, 2u, 3u);
  // got[r][call]: rank r's result of each call.
  std::vector<std::vector<std::vector<float>>> shared(w), gloo(w);
  RunShared(w, std::chrono::milliseconds(10000), [&](uint32_t r, Collective& c) {
    for (size_t n : kSizes) {
      std::vector<float> x = Inputs(seed + n, r, n);
      if (!c.AllReduceRankOrder(x.data(), n).ok()) x.assign(1, NAN);
      shared[r].push_back(std::move(x));
    }
  });
  const auto connected = testing::RunGlooGroup(w, 1000, [&](uint32_t r, Collective& c) {
    for (size_t n : kSizes) {
      std::vector<float> x = Inputs(seed + n, r, n);
      if (!c.AllReduceRankOrder(x.data(), n).ok()) x.assign(1, NAN);
      gloo[r].push_back(std::move(x));
    }
  });
  for (const Status& s : connected) REQUIRE(s.ok());
  for (size_t call = 0; call < kSizes.size(); ++call) {
    const size_t n = kSizes[call];
    std::vector<float> expected = Inputs(seed + n, 0, n);
    for (uint32_t r = 1; r < w; ++r) {
      const std::vector<float> x = Inputs(seed + n, r, n);
      for (size_t i = 0; i < n; ++i) expected[i] += x[i];
    }
    for (uint32_t r = 0; r < w; ++r) {
      INFO("W " << w << ", rank " << r << ", n " << n);
      REQUIRE(shared[r].size() == kSizes.size());
      REQUIRE(gloo[r].size() == kSizes.size());
      CHECK(SameBits(shared[r][call], expected));
      CHECK(SameBits(shared[r][call], gloo[r][call]));
    }
  }
}

TEST_CASE("the shared-memory broadcast and barrier", "[gpu]") {
  const uint32_t w = 3;
  std::vector<std::vector<float>> got(w);
  std::vector<char> ok(w, 0);  // not vector<bool>: its ranks would write bits of one byte at once (a data race)
  RunShared(w, std::chrono::milliseconds(10000), [&](uint32_t r, Collective& c) {
    std::vector<float> x(5, static_cast<float>(r));
    const bool a = c.Broadcast(x.data(), x.size(), 2).ok();
    const bool b = c.Barrier().ok();
    ok[r] = a && b;
    got[r] = x;
  });
  for (uint32_t r = 0; r < w; ++r) {
    CHECK(ok[r]);
    CHECK(got[r] == std::vector<float>(5, 2.0f));
  }
}

TEST_CASE("a shared-memory group breaks when a rank does not come, and stays broken", "[gpu]") {
  std::vector<Status> first(2), later(2);
  auto group = std::make_shared<SharedMemoryGroup>(3, std::chrono::milliseconds(200));
  auto stuck = ConnectSharedMemory(group, 2);  // connected, and never calls
  REQUIRE(stuck.ok());
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto c = ConnectSharedMemory(group, r);
      if (!c.ok()) return;
      std::vector<float> x(10, 1.0f);
      first[r] = (*c)->AllReduceRankOrder(x.data(), x.size());
      later[r] = (*c)->Barrier();
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t r = 0; r < 2; ++r) {
    CHECK(first[r].code() == Status::Code::kUnavailable);
    CHECK_THAT(first[r].message(), Catch::Contains("within 200 ms"));
    CHECK(later[r].code() == Status::Code::kUnavailable);
  }
}

TEST_CASE("a rank that leaves breaks the shared-memory group at once", "[gpu]") {
  auto group = std::make_shared<SharedMemoryGroup>(2, std::chrono::milliseconds(60000));
  Status got;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiting([&] {
    auto c = ConnectSharedMemory(group, 0);
    std::vector<float> x(10, 1.0f);
    if (c.ok()) got = (*c)->AllReduceRankOrder(x.data(), x.size());
  });
  {
    auto leaving = ConnectSharedMemory(group, 1);
    REQUIRE(leaving.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // destroyed, as when its sync scheduler stops
  waiting.join();
  CHECK(got.code() == Status::Code::kUnavailable);
  CHECK_THAT(got.message(), Catch::Contains("rank 1 left the group"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("ranks that disagree on the size break the shared-memory group, named", "[gpu]") {
  std::vector<Status> got(2);
  RunShared(2, std::chrono::milliseconds(10000), [&](uint32_t r, Collective& c) {
    std::vector<float> x(10 + r, 1.0f);
    got[r] = c.AllReduceRankOrder(x.data(), x.size());
  });
  for (const Status& s : got) {
    CHECK(s.code() == Status::Code::kUnavailable);
    CHECK_THAT(s.message(), Catch::Contains("floats"));
  }
  CHECK_FALSE(ConnectSharedMemory(std::make_shared<SharedMemoryGroup>(2, std::chrono::milliseconds(1)), 2).ok());
}

}  // namespace actorrec::gpu
