// The collective of trainers sharing one GPU (gpu/shared_device_collective.hpp)
// on fake device backends (memory of their own, pointer checks:
// tests/actors/trainer/fake_device_backend.hpp) and on the CPU backend: the
// rank-order all-reduce bitwise equal to the shared-memory collective's
// (itself held to Gloo's, TLS's and the NCCL kernel's), over calls that
// grow and shrink; broadcast, barrier, and the refusals as statuses.
//
// Rank threads only record what they saw; the test thread checks it.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "gpu/cpu_backend.hpp"
#include "gpu/shared_device_collective.hpp"
#include "tests/actors/trainer/fake_device_backend.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {
namespace {

using testing::Inputs;
using testing::SameBits;
using trainer::FakeDeviceBackend;

const std::vector<size_t> kSizes = {0, 1, 7, 1000, 4097, 3};

// Each rank's inputs uploaded into its backend's memory, all-reduced there
// (AllReduceRankOrder, or with `resident` AllReduceResident on the rank's
// backend) and downloaded: got[r][call]. `device_collective`: the
// shared-device collective, else the shared-memory one (a host collective).
std::vector<std::vector<std::vector<float>>> DeviceAllReduce(uint32_t w, uint64_t seed,
                                                             std::vector<std::unique_ptr<Backend>>& backends,
                                                             bool resident = false, bool device_collective = true) {
  auto group = std::make_shared<SharedMemoryGroup>(w, std::chrono::milliseconds(10000));
  std::vector<std::vector<std::vector<float>>> got(w);
  testing::RunRanks(
      w,
      [&](uint32_t r) {
        return device_collective ? ConnectSharedDevice(group, r, backends[r].get()) : ConnectSharedMemory(group, r);
      },
      [&](uint32_t r, Collective& c) {
        Backend& be = *backends[r];
        for (size_t n : kSizes) {
          std::vector<float> x = Inputs(seed + n, r, n);
          float* on = be.Allocate(n);
          be.Upload(on, x.data(), n);
          const Status st = resident ? c.AllReduceResident(be, on, n) : c.AllReduceRankOrder(on, n);
          if (!st.ok()) {
            x.assign(1, NAN);
          } else {
            be.Download(x.data(), on, n);
          }
          be.Free(on);
          got[r].push_back(std::move(x));
        }
      });
  return got;
}

}  // namespace

TEST_CASE("the shared-device all-reduce equals the shared-memory collective's rank-order sum bitwise", "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u, 4u);
  const uint64_t seed = GENERATE(1u, 2u);
  for (bool fake : {true, false}) {
    std::vector<std::unique_ptr<Backend>> backends;
    for (uint32_t r = 0; r < w; ++r) {
      if (fake) {
        backends.push_back(std::make_unique<FakeDeviceBackend>());
      } else {
        backends.push_back(MakeCpuBackend());
      }
    }
    const auto got = DeviceAllReduce(w, seed, backends);
    for (size_t call = 0; call < kSizes.size(); ++call) {
      const size_t n = kSizes[call];
      const std::vector<float> expected = testing::SharedMemoryRankOrderSum(w, seed + n, n);
      for (uint32_t r = 0; r < w; ++r) {
        INFO((fake ? "fake device" : "cpu") << ", W " << w << ", rank " << r << ", n " << n);
        REQUIRE(got[r].size() == kSizes.size());
        CHECK(SameBits(got[r][call], expected));
      }
    }
    for (auto& be : backends) {
      if (!fake) continue;
      auto& f = static_cast<FakeDeviceBackend&>(*be);
      CHECK(f.errors().empty());
    }
    // The collectives are gone: each freed its gathered buffer.
    for (auto& be : backends) {
      if (fake) CHECK(static_cast<FakeDeviceBackend&>(*be).live() == 0);
    }
  }
}

// The resident all-reduce (Collective::AllReduceResident, the trainers'
// sums in their backend's memory): in place on the shared-device
// collective, through the host (a download, the host sum, an upload) on a
// host collective; both the rank-order sum bitwise.
TEST_CASE("AllReduceResident sums in the backend's memory: in place on the shared-device collective and "
          "through the host on a host collective",
          "[gpu]") {
  const uint32_t w = GENERATE(1u, 2u, 3u);
  const uint64_t seed = 5;
  size_t nonempty = 0;
  for (size_t n : kSizes) nonempty += n > 0;
  for (bool device_collective : {true, false}) {
    INFO((device_collective ? "shared-device" : "shared-memory") << " collective, W " << w);
    std::vector<std::shared_ptr<trainer::FakeDeviceStats>> stats;
    std::vector<std::unique_ptr<Backend>> backends;
    for (uint32_t r = 0; r < w; ++r) {
      stats.push_back(std::make_shared<trainer::FakeDeviceStats>());
      backends.push_back(std::make_unique<FakeDeviceBackend>(stats.back()));
    }
    const auto got = DeviceAllReduce(w, seed, backends, true, device_collective);
    for (size_t call = 0; call < kSizes.size(); ++call) {
      const std::vector<float> expected = testing::SharedMemoryRankOrderSum(w, seed + kSizes[call], kSizes[call]);
      for (uint32_t r = 0; r < w; ++r) {
        INFO("rank " << r << ", n " << kSizes[call]);
        CHECK(SameBits(got[r][call], expected));
      }
    }
    for (uint32_t r = 0; r < w; ++r) {
      CHECK(static_cast<FakeDeviceBackend&>(*backends[r]).errors().empty());
      // The test's own upload and download per call, and the host path's
      // one each per call with data and more than one rank.
      const int extra = device_collective || w == 1 ? 0 : static_cast<int>(nonempty);
      CHECK(stats[r]->uploads.load() == static_cast<int>(kSizes.size()) + extra);
      CHECK(stats[r]->downloads.load() == static_cast<int>(kSizes.size()) + extra);
      CHECK(stats[r]->rank_sums.load() == (device_collective && w > 1 ? static_cast<int>(kSizes.size()) : 0));
    }
  }
}

TEST_CASE("the shared-device collective refuses a resident all-reduce of another backend's memory", "[gpu]") {
  auto group = std::make_shared<SharedMemoryGroup>(1, std::chrono::milliseconds(10000));
  FakeDeviceBackend mine, other;
  auto c = ConnectSharedDevice(group, 0, &mine);
  REQUIRE(c.ok());
  float* on = other.Allocate(4);
  const Status st = (*c)->AllReduceResident(other, on, 4);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains("another backend"));
  CHECK((*c)->AllReduceResident(mine, nullptr, 0).ok());
  other.Free(on);
}

TEST_CASE("the shared-device broadcast, barrier and refusals", "[gpu]") {
  const uint32_t w = 3;
  std::vector<std::unique_ptr<Backend>> backends;
  for (uint32_t r = 0; r < w; ++r) backends.push_back(std::make_unique<FakeDeviceBackend>());
  auto group = std::make_shared<SharedMemoryGroup>(w, std::chrono::milliseconds(10000));
  std::vector<std::vector<float>> got(w);
  std::vector<Status> broadcast(w), barrier(w), bad_root(w), mismatch(w), later(w);
  testing::RunRanks(
      w, [&](uint32_t r) { return ConnectSharedDevice(group, r, backends[r].get()); },
      [&](uint32_t r, Collective& c) {
        Backend& be = *backends[r];
        std::vector<float> x(5, static_cast<float>(r));
        float* on = be.Allocate(5);
        be.Upload(on, x.data(), 5);
        broadcast[r] = c.Broadcast(on, 5, 1);
        be.Download(x.data(), on, 5);
        got[r] = x;
        barrier[r] = c.Barrier();
        bad_root[r] = c.Broadcast(on, 5, 7);
        // Rank 2 passes another size: every rank's call fails naming it,
        // and the group stays broken.
        mismatch[r] = c.AllReduceRankOrder(on, r == 2 ? 4 : 5);
        later[r] = c.Barrier();
        be.Free(on);
      });
  for (uint32_t r = 0; r < w; ++r) {
    INFO("rank " << r);
    CHECK(broadcast[r].ok());
    CHECK(got[r] == std::vector<float>(5, 1.0f));
    CHECK(barrier[r].ok());
    CHECK(bad_root[r].code() == Status::Code::kInvalidArgument);
    CHECK(mismatch[r].code() == Status::Code::kUnavailable);
    CHECK_THAT(mismatch[r].message(), Catch::Contains("floats, rank"));
    CHECK(later[r].code() == Status::Code::kUnavailable);
  }
  CHECK(!ConnectSharedDevice(group, 3, backends[0].get()).ok());
  CHECK(!ConnectSharedDevice(group, 0, nullptr).ok());
}

}  // namespace actorrec::gpu
