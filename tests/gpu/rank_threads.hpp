// Ranks as threads of this test process, for the collectives' tests: each
// rank connects and runs the test's body; Catch2's assertions are not
// thread-safe, so a body only records what it saw.
#pragma once

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "base/status.hpp"
#include "data/gen/random.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/shared_memory_collective.hpp"

namespace actorrec::gpu::testing {

// Values over many binades (and signed zeros), so that the order of the
// additions shows in the low bits.
inline std::vector<float> Inputs(uint64_t seed, uint32_t rank, size_t n) {
  data::gen::Rng rng(seed * 1000 + rank);
  std::vector<float> x(n);
  for (float& v : x) {
    const uint64_t kind = rng.Below(20);
    v = kind == 0   ? 0.0f
        : kind == 1 ? -0.0f
                    : static_cast<float>(std::ldexp(rng.Normal(), static_cast<int>(rng.Below(41)) - 20));
  }
  return x;
}

inline bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// A store key prefix no other group of this process uses.
inline std::string UniquePrefix() {
  static std::atomic<int> counter{0};
  return "gloo-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Runs `w` ranks as threads: each connects with connect(rank) and runs
// body(rank, collective); a rank that fails to connect records its status
// instead (returned per rank).
inline std::vector<Status> RunRanks(uint32_t w,
                                    const std::function<Result<std::unique_ptr<Collective>>(uint32_t)>& connect,
                                    const std::function<void(uint32_t, Collective&)>& body) {
  std::vector<Status> connected(w);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < w; ++r) {
    threads.emplace_back([&, r] {
      auto c = connect(r);
      if (!c.ok()) {
        connected[r] = c.status();
        return;
      }
      body(r, **c);
    });
  }
  for (auto& t : threads) t.join();
  return connected;
}

// Connects `w` Gloo ranks (threads) and runs body(rank, collective) on each.
inline std::vector<Status> RunGlooGroup(uint32_t w, size_t chunk,
                                        const std::function<void(uint32_t, Collective&)>& body,
                                        std::shared_ptr<gloo::rendezvous::Store> store = nullptr) {
  if (!store) store = MakeInProcessStore();
  const std::string prefix = UniquePrefix();
  return RunRanks(
      w,
      [&](uint32_t r) {
        GlooOptions o;
        o.rank = r;
        o.size = w;
        o.store = store;
        o.prefix = prefix;
        o.timeout = std::chrono::milliseconds(10000);
        o.chunk_floats = chunk;
        return ConnectGloo(o);
      },
      body);
}

// The CPU's rank-order sum of Inputs(seed, r, n) over w ranks: what rank 0
// of a shared-memory group (one process's trainers) ends with; the
// collectives' tests hold every other rank and collective to it.
inline std::vector<float> SharedMemoryRankOrderSum(uint32_t w, uint64_t seed, size_t n) {
  auto group = std::make_shared<SharedMemoryGroup>(w, std::chrono::milliseconds(10000));
  std::vector<std::vector<float>> got(w);
  RunRanks(
      w, [&](uint32_t r) { return ConnectSharedMemory(group, r); },
      [&](uint32_t r, Collective& c) {
        std::vector<float> x = Inputs(seed, r, n);
        if (!c.AllReduceRankOrder(x.data(), n).ok()) x.assign(1, NAN);
        got[r] = std::move(x);
      });
  return got[0];
}

}  // namespace actorrec::gpu::testing
