// How NCCL ranks decide on NCCL and share their unique id through the
// rendezvous store (gpu/nccl_rendezvous.hpp): ranks as threads over an
// in-process store, two real processes over a file store with NCCL's own
// ncclGetUniqueId (it needs no device), and the failures that must come
// back as statuses naming the key. Also what ConnectNccl says on a machine
// without a device, and the readiness reasons behind cluster.collective.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "gpu/device_probe.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/nccl_collective.hpp"
#include "gpu/nccl_rendezvous.hpp"
#include "tests/gpu/rank_threads.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::gpu {
namespace {

constexpr std::chrono::milliseconds kWait{5000};

NcclUniqueIdBytes FakeId(char seed) {
  NcclUniqueIdBytes id;
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(seed + i * 7);
  return id;
}

// Runs body(rank) on `w` threads.
void OnThreads(uint32_t w, const std::function<void(uint32_t)>& body) {
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < w; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_CASE("NCCL ranks agree: NCCL only when every rank is ready, else the first rank that is not", "[gpu]") {
  const uint32_t w = 3;
  const uint32_t not_ready = GENERATE(3u, 0u, 1u, 2u);  // 3: every rank ready
  auto store = MakeInProcessStore();
  const std::string prefix = testing::UniquePrefix();
  std::vector<Result<NcclAgreement>> got(w, Status::Unavailable("not run"));
  OnThreads(w, [&](uint32_t r) {
    // not_ready == 1: ranks 1 and 2 are not ready, and rank 1 is named.
    const bool ready = !(r == not_ready || (not_ready == 1 && r == 2));
    const NcclReadiness mine{ready, ready ? "" : "why " + std::to_string(r)};
    got[r] = AgreeOnNccl(*store, prefix, r, w, mine, kWait);
  });
  for (uint32_t r = 0; r < w; ++r) {
    INFO("rank " << r << " not ready " << not_ready);
    REQUIRE(got[r].ok());
    CHECK(got[r]->all_ready == (not_ready == 3));
    CHECK(got[r]->why_not == (not_ready == 3 ? "" : "rank " + std::to_string(not_ready) + ": why " +
                                                        std::to_string(not_ready)));
  }
}

TEST_CASE("rank 0 makes the NCCL unique id and every other rank receives its bytes", "[gpu]") {
  const uint32_t w = GENERATE(2u, 4u);
  auto store = MakeInProcessStore();
  const std::string prefix = testing::UniquePrefix();
  std::vector<Result<NcclUniqueIdBytes>> got(w, Status::Unavailable("not run"));
  int made = 0;
  OnThreads(w, [&](uint32_t r) {
    got[r] = ShareNcclUniqueId(
        *store, prefix, r, [&]() -> Result<NcclUniqueIdBytes> { ++made; return FakeId(3); }, kWait);
  });
  CHECK(made == 1);  // only rank 0 calls make_id
  for (uint32_t r = 0; r < w; ++r) {
    REQUIRE(got[r].ok());
    CHECK(*got[r] == FakeId(3));
  }
}

TEST_CASE("a wrong-sized NCCL id, a bad readiness value and a silent store come back as statuses naming the key",
          "[gpu]") {
  auto store = MakeInProcessStore();
  const std::string prefix = testing::UniquePrefix();
  auto never = []() -> Result<NcclUniqueIdBytes> { return Status::Unavailable("rank 1 must not make the id"); };

  SECTION("an id of 5 bytes") {
    store->set(prefix + "/nccl-id", std::vector<char>(5, 'x'));
    auto got = ShareNcclUniqueId(*store, prefix, 1, never, kWait);
    REQUIRE(!got.ok());
    CHECK(got.status().code() == Status::Code::kCorruption);
    CHECK_THAT(got.status().message(), Catch::Contains("'" + prefix + "/nccl-id' holds 5 bytes"));
  }
  SECTION("no id within the timeout") {
    auto got = ShareNcclUniqueId(*store, prefix, 1, never, std::chrono::milliseconds(100));
    REQUIRE(!got.ok());
    CHECK(got.status().code() == Status::Code::kUnavailable);
    CHECK_THAT(got.status().message(), Catch::Contains("rank 1") && Catch::Contains(prefix + "/nccl-id") &&
                                           Catch::Contains("100 ms"));
  }
  SECTION("a readiness value that is not one") {
    store->set(prefix + "/nccl-ready/0", std::vector<char>{'1', 'x'});
    auto got = AgreeOnNccl(*store, prefix, 1, 2, {true, ""}, kWait);
    REQUIRE(!got.ok());
    CHECK(got.status().code() == Status::Code::kCorruption);
    CHECK_THAT(got.status().message(), Catch::Contains(prefix + "/nccl-ready/0"));
  }
  SECTION("a rank that never answers") {
    auto got = AgreeOnNccl(*store, prefix, 0, 2, {true, ""}, std::chrono::milliseconds(100));
    REQUIRE(!got.ok());
    CHECK_THAT(got.status().message(), Catch::Contains(prefix + "/nccl-ready/1"));
  }
  SECTION("a rank outside the group") {
    CHECK(AgreeOnNccl(*store, prefix, 2, 2, {true, ""}, kWait).status().code() == Status::Code::kInvalidArgument);
  }
}

TEST_CASE("two processes share NCCL's own unique id through a file store", "[gpu]") {
  actorrec::testing::TempDir dir;
  const std::string prefix = testing::UniquePrefix();
  const std::string received = dir.File("received");
  // Without NCCL in the build a fake id stands in: the exchange is the same.
  auto make = []() -> Result<NcclUniqueIdBytes> { return NcclSupport().ok() ? MakeNcclUniqueId() : FakeId(9); };
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // rank 1: receives, writes the bytes, exits without Catch2
    int rc = 1;
    if (auto store = MakeFileStore(dir.path()); store.ok()) {
      if (auto id = ShareNcclUniqueId(**store, prefix, 1, make, kWait); id.ok()) {
        std::ofstream(received, std::ios::binary).write(id->data(), static_cast<std::streamsize>(id->size()));
        rc = 0;
      }
    }
    ::_exit(rc);
  }
  auto store = MakeFileStore(dir.path());
  REQUIRE(store.ok());
  auto mine = ShareNcclUniqueId(**store, prefix, 0, make, kWait);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO(mine.status().message());
  REQUIRE(mine.ok());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string bytes = actorrec::testing::ReadBytes(received);
  CHECK(bytes == std::string(mine->data(), mine->size()));
  CHECK(std::any_of(mine->begin(), mine->end(), [](char c) { return c != 0; }));
}

TEST_CASE("NCCL readiness names why a rank cannot join, and cluster.collective = nccl refuses with it", "[gpu]") {
  const Status built = Status::Ok();
  const std::vector<RankDevice> one = {{0, 0}};
  CHECK(NcclReadinessOf(built, true, "cuda (device 0)", one).ready);
  const NcclReadiness no_nccl = NcclReadinessOf(Status::NotSupported("this build has no NCCL"), true, "cuda", one);
  CHECK(!no_nccl.ready);
  CHECK(no_nccl.why_not == "this build has no NCCL");
  const NcclReadiness cpu = NcclReadinessOf(built, false, "cpu (oneDNN sgemm)", {});
  CHECK(!cpu.ready);
  CHECK_THAT(cpu.why_not, Catch::Contains("CPU backend (cpu (oneDNN sgemm))"));
  // Several trainers in one process: ready when each is on a device of its
  // own, else the reason names the ranks and the device they share.
  CHECK(NcclReadinessOf(built, true, "cuda", {{2, 0}, {3, 1}}).ready);
  CHECK(NcclReadinessOf(built, true, "cuda", {{0, 3}, {1, 0}, {2, 1}, {3, 2}}).ready);
  const NcclReadiness two = NcclReadinessOf(built, true, "cuda", {{0, 0}, {1, 0}});
  CHECK(!two.ready);
  CHECK_THAT(two.why_not, Catch::Contains("2 trainers on CUDA devices 0, 0") &&
                              Catch::Contains("trainer ranks 0 and 1 share CUDA device 0"));
  const NcclReadiness wrapped = NcclReadinessOf(built, true, "cuda", {{4, 0}, {5, 1}, {6, 0}});
  CHECK(!wrapped.ready);
  CHECK_THAT(wrapped.why_not, Catch::Contains("trainer ranks 4 and 6 share CUDA device 0"));
  CHECK(CheckNcclRequest({true, ""}, "c.toml").ok());
  const Status refused = CheckNcclRequest(cpu, "c.toml");
  CHECK(refused.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::StartsWith("c.toml: cluster.collective = \"nccl\"") &&
                                    Catch::Contains("CPU backend"));
}

TEST_CASE("ConnectNccl without a usable device, or without NCCL, fails with a status naming why", "[gpu]") {
  if (ProbeDevices().cuda_devices > 0) {
    WARN("a CUDA device is usable here: the device tests (gpu_device_tests) cover ConnectNccl");
    return;
  }
  NcclOptions o;
  o.rank = 0;
  o.size = 1;
  auto got = ConnectNccl(o);
  REQUIRE(!got.ok());
  if (NcclSupport().ok()) {
    CHECK(got.status().code() == Status::Code::kUnavailable);
    CHECK_THAT(got.status().message(), Catch::Contains("nccl rank 0 of 1 (device 0)") &&
                                           Catch::Contains("cudaSetDevice"));
  } else {
    CHECK(got.status().code() == Status::Code::kNotSupported);
  }
  o.rank = 2;
  CHECK(ConnectNccl(o).status().code() == (NcclSupport().ok() ? Status::Code::kInvalidArgument
                                                               : Status::Code::kNotSupported));
}

}  // namespace actorrec::gpu
