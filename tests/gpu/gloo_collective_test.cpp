// The Gloo collectives with ranks as threads of this process: the rank-order
// all-reduce bitwise against a sequential loop over the ranks (many sizes,
// seeds and group sizes, chunks tiny enough that every call pipelines),
// broadcast, barrier, and failures that must come back as statuses.
//
// Catch2's assertions are not thread-safe: rank threads only record what they
// saw, and the test thread checks it after joining them.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/gloo_collective.hpp"
#include "tests/gpu/rank_threads.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::gpu {
namespace {

using testing::RunGlooGroup;
using testing::SameBits;
using testing::UniquePrefix;

// Values spread over many binades so that the order of additions shows in
// the low bits.
float SpreadValue(data::gen::Rng& rng) {
  const int exponent = static_cast<int>(rng.Below(41)) - 20;
  return static_cast<float>(std::ldexp(rng.Normal(), exponent));
}

}  // namespace

TEST_CASE("AllReduceRankOrder equals the sequential rank-order sum bitwise on every rank", "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u, 4u);
  const size_t chunk = 5;
  const int calls = 40;
  // The sizes of each call, the same on every rank: 0, 1, around the chunk
  // size, and random sizes up to many chunks.
  std::vector<size_t> sizes{0, 1, chunk - 1, chunk, chunk + 1, 4 * chunk, 4 * chunk + 1};
  data::gen::Rng size_rng(w);
  while (sizes.size() < calls) sizes.push_back(size_rng.Below(300));

  auto input = [](uint32_t rank, int call, size_t n) {
    data::gen::Rng rng(data::gen::HashPair(rank, static_cast<uint64_t>(call)));
    std::vector<float> x(n);
    for (float& v : x) v = SpreadValue(rng);
    return x;
  };
  // results[rank][call]
  std::vector<std::vector<std::vector<float>>> results(w, std::vector<std::vector<float>>(calls));
  std::vector<std::vector<Status>> statuses(w, std::vector<Status>(calls));
  auto connect = RunGlooGroup(w, chunk, [&](uint32_t r, Collective& c) {
    for (int call = 0; call < calls; ++call) {
      std::vector<float> x = input(r, call, sizes[call]);
      statuses[r][call] = c.AllReduceRankOrder(x.data(), x.size());
      results[r][call] = std::move(x);
    }
  });

  size_t order_sensitive = 0;  // elements whose sum a ring's order would change
  for (int call = 0; call < calls; ++call) {
    const size_t n = sizes[call];
    std::vector<std::vector<float>> x(w);
    for (uint32_t r = 0; r < w; ++r) x[r] = input(r, call, n);
    std::vector<float> want = x[0];
    for (uint32_t r = 1; r < w; ++r)
      for (size_t i = 0; i < n; ++i) want[i] = want[i] + x[r][i];
    for (size_t i = 0; i < n && w > 2; ++i) {
      // A ring all-reduce starts chunk c's sum at rank c+1.
      float ring = x[1][i];
      for (uint32_t k = 2; k < w + 1; ++k) ring = ring + x[k % w][i];
      order_sensitive += std::memcmp(&ring, &want[i], sizeof(float)) != 0;
    }
    for (uint32_t r = 0; r < w; ++r) {
      INFO("W " << w << " rank " << r << " call " << call << " n " << n);
      REQUIRE(connect[r].ok());
      REQUIRE(statuses[r][call].ok());
      CHECK(SameBits(results[r][call], want));
    }
  }
  // The inputs can tell the rank order from another order, so the bitwise
  // check above would catch a chain that added in the wrong order.
  if (w > 2) CHECK(order_sensitive > 0);
}

TEST_CASE("AllReduceRankOrder pipelines inputs of many default-size chunks", "[gpu]") {
  const uint32_t w = 3;
  const size_t n = 5 * kDefaultChunkFloats + 123;  // more chunks than the receive window
  std::vector<std::vector<float>> results(w);
  std::vector<Status> statuses(w);
  auto input = [&](uint32_t r) {
    std::vector<float> x(n);
    data::gen::Rng rng(100 + r);
    for (float& v : x) v = SpreadValue(rng);
    return x;
  };
  auto connect = RunGlooGroup(w, kDefaultChunkFloats, [&](uint32_t r, Collective& c) {
    results[r] = input(r);
    statuses[r] = c.AllReduceRankOrder(results[r].data(), n);
  });
  std::vector<float> want = input(0);
  for (uint32_t r = 1; r < w; ++r) {
    const std::vector<float> x = input(r);
    for (size_t i = 0; i < n; ++i) want[i] = want[i] + x[i];
  }
  for (uint32_t r = 0; r < w; ++r) {
    REQUIRE(connect[r].ok());
    REQUIRE(statuses[r].ok());
    CHECK(SameBits(results[r], want));
  }
}

TEST_CASE("Broadcast gives every rank the root's data", "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u, 4u);
  const std::vector<size_t> sizes{0, 1, 17, 1000};
  // results[rank][root][size index]
  std::vector<std::vector<std::vector<std::vector<float>>>> results(w);
  std::vector<std::vector<Status>> statuses(w);
  auto input = [](uint32_t rank, uint32_t root, size_t n) {
    std::vector<float> x(n);
    data::gen::Rng rng(data::gen::HashPair(rank * 16 + root, n));
    for (float& v : x) v = SpreadValue(rng);
    return x;
  };
  auto connect = RunGlooGroup(w, 5, [&](uint32_t r, Collective& c) {
    results[r].resize(w);
    for (uint32_t root = 0; root < w; ++root) {
      for (size_t n : sizes) {
        std::vector<float> x = input(r, root, n);
        statuses[r].push_back(c.Broadcast(x.data(), n, root));
        results[r][root].push_back(std::move(x));
      }
    }
    statuses[r].push_back(c.Broadcast(nullptr, 0, w));  // a root outside the group
  });
  for (uint32_t r = 0; r < w; ++r) {
    REQUIRE(connect[r].ok());
    REQUIRE(statuses[r].size() == w * sizes.size() + 1);
    for (size_t k = 0; k + 1 < statuses[r].size(); ++k) CHECK(statuses[r][k].ok());
    CHECK(statuses[r].back().code() == Status::Code::kInvalidArgument);
    for (uint32_t root = 0; root < w; ++root)
      for (size_t s = 0; s < sizes.size(); ++s) CHECK(SameBits(results[r][root][s], input(root, root, sizes[s])));
  }
}

TEST_CASE("Barrier returns on every rank only after all ranks entered it", "[gpu]") {
  const uint32_t w = 4;
  const int rounds = 20;
  std::atomic<int> entered{0};
  std::vector<std::vector<int>> seen(w);  // how many had entered when each rank left round k
  std::vector<Status> statuses(w);
  auto connect = RunGlooGroup(w, 5, [&](uint32_t r, Collective& c) {
    for (int k = 0; k < rounds && statuses[r].ok(); ++k) {
      entered.fetch_add(1);
      statuses[r] = c.Barrier();
      seen[r].push_back(entered.load());
      // Nobody enters round k+1 before everyone left round k's barrier.
      if (statuses[r].ok()) statuses[r] = c.Barrier();
    }
  });
  for (uint32_t r = 0; r < w; ++r) {
    REQUIRE(connect[r].ok());
    REQUIRE(statuses[r].ok());
    REQUIRE(seen[r].size() == size_t{rounds});
    for (int k = 0; k < rounds; ++k) CHECK(seen[r][k] >= static_cast<int>(w) * (k + 1));
  }
}

TEST_CASE("A file store directory connects the ranks too", "[gpu]") {
  ::actorrec::testing::TempDir dir;
  auto store = MakeFileStore(dir.path());
  REQUIRE(store.ok());
  std::vector<std::vector<float>> results(2);
  std::vector<Status> statuses(2);
  auto connect = RunGlooGroup(
      2, 5,
      [&](uint32_t r, Collective& c) {
        results[r] = {1.0f + r, 2.0f, 1e-8f};
        statuses[r] = c.AllReduceRankOrder(results[r].data(), 3);
      },
      *store);
  for (uint32_t r = 0; r < 2; ++r) {
    REQUIRE(connect[r].ok());
    REQUIRE(statuses[r].ok());
    CHECK(results[r] == std::vector<float>{3.0f, 4.0f, 1e-8f + 1e-8f});
  }
}

TEST_CASE("Bad collective options are reported, not crashed on", "[gpu]") {
  GlooOptions o;
  o.size = 2;
  o.rank = 2;
  o.store = MakeInProcessStore();
  o.prefix = UniquePrefix();
  CHECK(ConnectGloo(o).status().code() == Status::Code::kInvalidArgument);
  o.rank = 0;
  o.store = nullptr;
  CHECK(ConnectGloo(o).status().code() == Status::Code::kInvalidArgument);
  o.store = MakeInProcessStore();
  o.prefix.clear();
  CHECK(ConnectGloo(o).status().code() == Status::Code::kInvalidArgument);
  auto missing = MakeFileStore("/nonexistent/actorrec-gloo-dir");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
  CHECK(missing.status().message().find("/nonexistent/actorrec-gloo-dir") != std::string::npos);

  SECTION("W == 1 is the identity without a store") {
    GlooOptions solo;
    auto c = ConnectGloo(solo);
    REQUIRE(c.ok());
    std::vector<float> x{-0.0f, 1.5f};
    CHECK((*c)->AllReduceRankOrder(x.data(), 2).ok());
    CHECK((*c)->Broadcast(x.data(), 2, 0).ok());
    CHECK((*c)->Barrier().ok());
    CHECK(std::signbit(x[0]));
    CHECK(x[1] == 1.5f);
  }
}

TEST_CASE("A peer that never arrives times out the rendezvous with a status", "[gpu]") {
  GlooOptions o;
  o.size = 2;
  o.rank = 0;
  o.store = MakeInProcessStore();
  o.prefix = UniquePrefix();
  o.timeout = std::chrono::milliseconds(300);
  auto c = ConnectGloo(o);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == Status::Code::kUnavailable);
  CHECK(c.status().message().find("rank 0 of 2") != std::string::npos);
}

TEST_CASE("A peer that stops answering breaks the collective with a status", "[gpu]") {
  auto store = MakeInProcessStore();
  const std::string prefix = UniquePrefix();
  Status first, second, connect[2];
  std::atomic<bool> survivor_done{false};
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      GlooOptions o;
      o.rank = r;
      o.size = 2;
      o.store = store;
      o.prefix = prefix;
      o.timeout = std::chrono::milliseconds(300);
      auto c = ConnectGloo(o);
      if (!c.ok()) {
        connect[r] = c.status();
        survivor_done = true;
        return;
      }
      if (r == 1) {
        // Connected, then silent until the survivor gave up.
        while (!survivor_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return;
      }
      std::vector<float> x(100, 1.0f);
      first = (*c)->AllReduceRankOrder(x.data(), x.size());
      second = (*c)->AllReduceRankOrder(x.data(), x.size());
      survivor_done = true;
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(connect[0].ok());
  REQUIRE(connect[1].ok());
  CHECK(first.code() == Status::Code::kUnavailable);
  CHECK(first.message().find("all-reduce on rank 0 of 2") != std::string::npos);
  CHECK(second.message() == first.message());
}

}  // namespace actorrec::gpu
