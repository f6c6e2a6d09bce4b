// Ranks as threads of this test process, for the collectives' tests: each
// rank connects and runs the test's body; Catch2's assertions are not
// thread-safe, so a body only records what it saw.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "gpu/gloo_collective.hpp"

namespace actorrec::gpu::testing {

// A store key prefix no other group of this process uses.
inline std::string UniquePrefix() {
  static std::atomic<int> counter{0};
  return "gloo-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Connects `w` Gloo ranks (threads) and runs body(rank, collective) on
// each; a rank that fails to connect records its status instead.
inline std::vector<Status> RunGlooGroup(uint32_t w, size_t chunk,
                                        const std::function<void(uint32_t, Collective&)>& body,
                                        std::shared_ptr<gloo::rendezvous::Store> store = nullptr) {
  if (!store) store = MakeInProcessStore();
  const std::string prefix = UniquePrefix();
  std::vector<Status> connect(w);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < w; ++r) {
    threads.emplace_back([&, r] {
      GlooOptions o;
      o.rank = r;
      o.size = w;
      o.store = store;
      o.prefix = prefix;
      o.timeout = std::chrono::milliseconds(10000);
      o.chunk_floats = chunk;
      auto c = ConnectGloo(o);
      if (!c.ok()) {
        connect[r] = c.status();
        return;
      }
      body(r, **c);
    });
  }
  for (auto& t : threads) t.join();
  return connect;
}

}  // namespace actorrec::gpu::testing
