// Device tests of the NCCL collective (gpu/nccl_collective.hpp): the
// rank-order sum kernel on a GPU against the host's rank-order sum, a
// 1-rank communicator (any GPU machine), and, where two or more GPUs exist,
// two ranks on two devices, whose all-reduce must equal the CPU's rank-order
// sum (the shared-memory collective) bit for bit, connected from a thread
// each or together from one thread (ConnectNcclRanks: one process's ranks in
// one NCCL group, as RunParts places trainers on devices of their own).
// Each test returns early,
// with a warning, when what it needs is absent (no device, no NCCL in the
// build, one GPU). AllReduceResident (the trainers' sums in device memory)
// on each rank's CUDA backend, with 1 rank and, where two GPUs exist, 2.
// Written for gpu_device_tests; built, not yet run on a GPU.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gpu/cuda/rank_sum_kernels.cuh"
#include "gpu/cuda_backend.hpp"
#include "gpu/cuda/rank_sum_ops.hpp"
#include "gpu/nccl_collective.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {
namespace {

using testing::Inputs;
using testing::SameBits;

int Devices() {
  if (std::getenv("ACTORREC_GPU_TESTS_ON_CPU") != nullptr) return 0;  // no CUDA stand-in for NCCL
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

// Sizes across the buffers' growth, and past one launch's 65535 × 256
// threads (the kernel strides) for the largest.
const std::vector<size_t> kSizes = {1, 7, 1000, 4097, 100003, 3, 0, size_t{17} << 20};

NcclOptions Group(uint32_t rank, uint32_t size, std::shared_ptr<gloo::rendezvous::Store> store,
                  const std::string& prefix) {
  NcclOptions o;
  o.rank = rank;
  o.size = size;
  o.device = static_cast<int>(rank);
  o.store = std::move(store);
  o.prefix = prefix;
  o.timeout = std::chrono::milliseconds(60000);
  return o;
}

}  // namespace

TEST_CASE("the rank-order sum kernel equals the host's rank-order sum bitwise", "[gpu-device]") {
  if (Devices() == 0) {
    WARN("no usable CUDA device: the rank-order sum kernel is not checked");
    return;
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  for (uint32_t w : {1u, 2u, 3u, 5u, 8u}) {
    for (size_t n : {size_t{1}, size_t{1000}, size_t{100003}, size_t{17} << 20}) {
      if (w == 8 && n > 100003) continue;  // 8 × 17 Mi floats: half a GiB of memory for no new case
      std::vector<float> gathered;
      for (uint32_t r = 0; r < w; ++r) {
        const std::vector<float> x = Inputs(w * 31 + n, r, n);
        gathered.insert(gathered.end(), x.begin(), x.end());
      }
      std::vector<float> want(n), got(n);
      for (size_t i = 0; i < n; ++i) want[i] = cuda::RankOrderSumElement(gathered.data(), n, w, i);
      float *d_in = nullptr, *d_out = nullptr;
      REQUIRE(cudaMalloc(&d_in, gathered.size() * sizeof(float)) == cudaSuccess);
      REQUIRE(cudaMalloc(&d_out, n * sizeof(float)) == cudaSuccess);
      REQUIRE(cudaMemcpy(d_in, gathered.data(), gathered.size() * sizeof(float), cudaMemcpyHostToDevice) ==
              cudaSuccess);
      CHECK(cuda::LaunchRankOrderSum(d_in, n, w, d_out, nullptr) == cudaSuccess);
      REQUIRE(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
      cudaFree(d_in);
      cudaFree(d_out);
      INFO("W " << w << " n " << n);
      CHECK(SameBits(got, want));
    }
  }
}

TEST_CASE("a 1-rank NCCL communicator leaves data as is, broadcasts and passes barriers", "[gpu-device]") {
  if (Devices() == 0 || !NcclSupport().ok()) {
    WARN("no usable CUDA device or no NCCL in this build: the 1-rank NCCL communicator is not checked");
    return;
  }
  auto c = ConnectNccl(Group(0, 1, nullptr, ""));
  INFO(c.status().message());
  REQUIRE(c.ok());
  for (size_t n : kSizes) {
    std::vector<float> x = Inputs(n, 0, n);
    const std::vector<float> want = x;
    INFO("n " << n);
    CHECK((*c)->AllReduceRankOrder(x.data(), n).ok());
    CHECK(SameBits(x, want));
    CHECK((*c)->Broadcast(x.data(), n, 0).ok());
    CHECK(SameBits(x, want));
  }
  CHECK((*c)->Barrier().ok());
  float one = 1.0f;
  CHECK((*c)->Broadcast(&one, 1, 1).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("two NCCL ranks on two GPUs sum bitwise as the CPU's rank-order sum", "[gpu-device]") {
  if (Devices() < 2 || !NcclSupport().ok()) {
    WARN("fewer than two usable CUDA devices or no NCCL in this build: the 2-rank NCCL sums are not checked");
    return;
  }
  const uint32_t w = 2;
  auto store = MakeInProcessStore();
  const std::string prefix = testing::UniquePrefix();
  std::vector<std::vector<std::vector<float>>> got(w);
  std::vector<std::vector<float>> broadcast(w);
  std::vector<Status> calls(w);
  const auto connected = testing::RunRanks(
      w, [&](uint32_t r) { return ConnectNccl(Group(r, w, store, prefix)); },
      [&](uint32_t r, Collective& c) {
        for (size_t n : kSizes) {
          std::vector<float> x = Inputs(n + 5, r, n);
          if (Status st = c.AllReduceRankOrder(x.data(), n); !st.ok() && calls[r].ok()) calls[r] = st;
          got[r].push_back(std::move(x));
        }
        std::vector<float> b = Inputs(77, r, 1000);
        if (Status st = c.Broadcast(b.data(), b.size(), 1); !st.ok() && calls[r].ok()) calls[r] = st;
        if (Status st = c.Barrier(); !st.ok() && calls[r].ok()) calls[r] = st;
        broadcast[r] = std::move(b);
      });
  for (uint32_t r = 0; r < w; ++r) {
    INFO("rank " << r << ": " << connected[r].message() << " " << calls[r].message());
    REQUIRE(connected[r].ok());
    REQUIRE(calls[r].ok());
    REQUIRE(got[r].size() == kSizes.size());
    for (size_t k = 0; k < kSizes.size(); ++k) {
      INFO("n " << kSizes[k]);
      CHECK(SameBits(got[r][k], testing::SharedMemoryRankOrderSum(w, kSizes[k] + 5, kSizes[k])));
    }
    CHECK(SameBits(broadcast[r], Inputs(77, 1, 1000)));
  }
}

TEST_CASE("NCCL's resident all-reduce sums device buffers in place as the CPU's rank-order sum", "[gpu-device]") {
  if (Devices() == 0 || !NcclSupport().ok()) {
    WARN("no usable CUDA device or no NCCL in this build: the resident NCCL all-reduce is not checked");
    return;
  }
  for (uint32_t w : {1u, 2u}) {
    if (w > static_cast<uint32_t>(Devices())) {
      WARN("one usable CUDA device: the 2-rank resident NCCL all-reduce is not checked");
      continue;
    }
    auto store = MakeInProcessStore();
    const std::string prefix = testing::UniquePrefix();
    std::vector<std::vector<std::vector<float>>> got(w);
    std::vector<Status> calls(w);
    const auto connected = testing::RunRanks(
        w, [&](uint32_t r) { return ConnectNccl(Group(r, w, store, prefix)); },
        [&](uint32_t r, Collective& c) {
          auto backend = MakeCudaBackend(static_cast<int>(r));
          if (!backend.ok()) {
            calls[r] = backend.status();
            return;
          }
          Backend& be = **backend;
          for (size_t n : {size_t{1}, size_t{4097}, size_t{0}, size_t{100003}}) {
            std::vector<float> x = Inputs(n + 9, r, n);
            float* on = be.Allocate(n);
            be.Upload(on, x.data(), n);
            if (Status st = c.AllReduceResident(be, on, n); !st.ok() && calls[r].ok()) calls[r] = st;
            be.Download(x.data(), on, n);
            be.Free(on);
            got[r].push_back(std::move(x));
          }
        });
    for (uint32_t r = 0; r < w; ++r) {
      INFO("W " << w << ", rank " << r << ": " << connected[r].message() << " " << calls[r].message());
      REQUIRE(connected[r].ok());
      REQUIRE(calls[r].ok());
      size_t k = 0;
      for (size_t n : {size_t{1}, size_t{4097}, size_t{0}, size_t{100003}}) {
        INFO("n " << n);
        CHECK(SameBits(got[r][k++], testing::SharedMemoryRankOrderSum(w, n + 9, n)));
      }
    }
  }
}

TEST_CASE("one process's NCCL ranks made together on GPUs of their own sum bitwise as the CPU's rank-order sum",
          "[gpu-device]") {
  const int devices = Devices();
  if (devices < 2 || !NcclSupport().ok()) {
    WARN("fewer than two usable CUDA devices or no NCCL in this build: ranks made together are not checked");
    return;
  }
  const uint32_t w = static_cast<uint32_t>(std::min(devices, 4));
  std::vector<RankDevice> ranks;
  for (uint32_t r = 0; r < w; ++r) ranks.push_back({r, static_cast<int>(w - 1 - r)});  // rank r on device w−1−r
  NcclOptions group = Group(0, w, nullptr, "");
  auto made = ConnectNcclRanks(group, ranks);
  INFO(made.status().message());
  REQUIRE(made.ok());
  REQUIRE(made->size() == w);
  // Each rank from a thread of its own, as the sync schedulers use them.
  std::vector<std::vector<std::vector<float>>> got(w);
  std::vector<Status> calls(w);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < w; ++r) {
    threads.emplace_back([&, r] {
      Collective& c = *(*made)[r];
      for (size_t n : kSizes) {
        std::vector<float> x = Inputs(n + 9, r, n);
        if (Status st = c.AllReduceRankOrder(x.data(), n); !st.ok() && calls[r].ok()) calls[r] = st;
        got[r].push_back(std::move(x));
      }
      if (Status st = c.Barrier(); !st.ok() && calls[r].ok()) calls[r] = st;
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t r = 0; r < w; ++r) {
    INFO("rank " << r << " on device " << ranks[r].device << ": " << calls[r].message());
    CHECK((*made)[r]->rank() == r);
    REQUIRE(calls[r].ok());
    REQUIRE(got[r].size() == kSizes.size());
    for (size_t k = 0; k < kSizes.size(); ++k) {
      INFO("n " << kSizes[k]);
      CHECK(SameBits(got[r][k], testing::SharedMemoryRankOrderSum(w, kSizes[k] + 9, kSizes[k])));
    }
  }
  // Two ranks on one device are refused before NCCL is asked.
  CHECK(ConnectNcclRanks(group, {{0, 0}, {1, 0}}).status().code() == Status::Code::kInvalidArgument);
}

}  // namespace actorrec::gpu
