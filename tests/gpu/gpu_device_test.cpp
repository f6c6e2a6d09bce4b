// CudaBackend against the CPU backend on a real device, op by op: GEMM
// within a relative 1e-5 per element (its sums run in another order),
// pooling and its backward bitwise (the same sums in the same order); and a
// small DLRM trained with training.backend = "cuda" (device-resident: its
// whole step on the device) in every mode, and Wide&Deep and DeepFM in
// three, whose parameters must equal the no_cache run's bitwise, and stay
// within a bound of the CPU's. Run only
// where a device is usable (gpu_device_skip.cpp skips otherwise).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "gpu/cpu_backend.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/device_probe.hpp"
#include "tests/actors/trainer/device_matrix.hpp"
#include "tests/actors/trainer/lockstep_digest.hpp"
#include "tests/gpu/backend_cases.hpp"

namespace actorrec::gpu {
namespace {

// ACTORREC_GPU_TESTS_ON_CPU (gpu_device_skip.cpp): the CPU backend stands
// in for CUDA, to check these tests without a GPU.
bool OnCpu() { return std::getenv("ACTORREC_GPU_TESTS_ON_CPU") != nullptr; }

std::unique_ptr<Backend> Cuda() {
  auto be = OnCpu() ? MakeCpuBackend(CpuGemmLibrary::kOpenBlas) : MakeCudaBackend(0);
  INFO(be.status().message());
  REQUIRE(be.ok());
  return std::move(be).value();
}

// One GEMM (GemmCase) on both backends. Each element within 1e-5 of the
// magnitude of its terms (Σ|alpha·a·b| + |beta·c|): the relative error of a
// sum, whatever cancels; the padding between C's rows untouched (the
// staging copies write only m × n).
void CompareGemm(Backend& gpu, Backend& cpu, data::gen::Rng& rng, bool ta, bool tb, int m, int n, int k, float alpha,
                 float beta) {
  const GemmCase g = MakeGemmCase(rng, ta, tb, m, n, k, beta);
  std::vector<float> want = g.c, got = g.c;
  g.Run(cpu, alpha, beta, want.data());
  g.Run(gpu, alpha, beta, got.data());
  // One assertion per problem (millions of elements): the worst element.
  double worst = 0;
  int worst_i = 0, worst_j = 0, padding_touched = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < g.ldc; ++j) {
      const size_t e = size_t(i) * g.ldc + j;
      if (j >= n) {
        padding_touched += got[e] != kGemmPadding;
        continue;
      }
      double mag = beta == 0.0f ? 0.0 : std::fabs(double(beta) * g.c[e]);
      for (int p = 0; p < k; ++p) mag += std::fabs(double(alpha) * g.A(i, p) * g.B(p, j));
      const double err = std::isfinite(got[e]) ? std::fabs(double(got[e]) - want[e]) / mag : INFINITY;
      if (!(err <= worst)) worst = err, worst_i = i, worst_j = j;
    }
  }
  INFO("ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " beta " << beta << ": worst at "
             << worst_i << "," << worst_j);
  CHECK(padding_touched == 0);
  CHECK(worst <= 1e-5);
}

}  // namespace

TEST_CASE("CUDA Gemm equals the CPU backend's within 1e-5 in all four transpose cases and odd shapes",
          "[gpu-device]") {
  auto gpu = Cuda();
  auto cpu = MakeCpuBackend();
  data::gen::Rng rng(5);
  const int shapes[][3] = {{1, 1, 1},   {7, 5, 3},    {1, 17, 33},  {33, 1, 17},    {17, 33, 1},
                           {13, 64, 129}, {64, 16, 13}, {1024, 512, 479}, {1024, 13, 512}, {367, 256, 1024}};
  for (auto [m, n, k] : shapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CompareGemm(*gpu, *cpu, rng, ta, tb, m, n, k, 1.0f, 0.0f);
        CompareGemm(*gpu, *cpu, rng, ta, tb, m, n, k, 2.0f, 0.5f);
      }
    }
  }
  for (int trial = 0; trial < 40; ++trial) {
    const int m = 1 + static_cast<int>(rng.Below(300)), n = 1 + static_cast<int>(rng.Below(300)),
              k = 1 + static_cast<int>(rng.Below(300));
    CompareGemm(*gpu, *cpu, rng, rng.Below(2) == 1, rng.Below(2) == 1, m, n, k, rng.Below(2) ? 1.0f : -0.75f,
                rng.Below(2) ? 0.0f : 1.0f);
  }
}

TEST_CASE("CUDA Gemm with k == 0 or an empty C does what the CPU backend does", "[gpu-device]") {
  CheckEmptyGemms(*Cuda());
}

TEST_CASE("CUDA Gemm gives the same bits on every call, backend and thread", "[gpu-device]") {
  CheckGemmRepeats(
      [] {
        auto be = OnCpu() ? MakeCpuBackend(CpuGemmLibrary::kOpenBlas) : MakeCudaBackend(0);
        return be.ok() ? std::move(be).value() : nullptr;
      },
      1024, 512, 479);
}

TEST_CASE("CUDA PoolBySlot and BagGradToUnique equal the CPU backend bitwise", "[gpu-device]") {
  auto gpu = Cuda();
  auto cpu = MakeCpuBackend();
  const size_t widths[] = {1, 7, 16, 33, 128};
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    data::gen::Rng rng(seed);
    const bool skewed = seed % 2 == 0;
    // The last seeds: more elements than one launch's 65535 blocks of 256
    // threads cover, so threads stride.
    const size_t samples = seed > 115 ? 140000 : 1 + rng.Below(3000);
    const BagCase c = MakeBagCase(rng, widths[seed % 5], 1 + rng.Below(600), 1 + rng.Below(300), samples, skewed);
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
      INFO("seed " << seed << " width " << c.width << " samples " << samples << (skewed ? " skewed" : "") << " mean "
                   << (pooling == Pooling::kMean));
      std::vector<float> want(samples * c.out_stride, 7.0f), got = want;
      cpu->PoolBySlot(c.rows.data(), c.stride, c.width, c.bags.view(), pooling, want.data(), c.out_stride);
      gpu->PoolBySlot(c.rows.data(), c.stride, c.width, c.bags.view(), pooling, got.data(), c.out_stride);
      CHECK(SameBits(got, want));
      std::vector<float> want_grad(c.unique * c.width, 3.0f), got_grad = want_grad;
      cpu->BagGradToUnique(c.grad.data(), c.in_stride, c.width, c.bags.view(), pooling, want_grad.data());
      gpu->BagGradToUnique(c.grad.data(), c.in_stride, c.width, c.bags.view(), pooling, got_grad.data());
      CHECK(SameBits(got_grad, want_grad));
    }
  }
}

TEST_CASE("CUDA GatherRows and SumRowsByIndex on device memory equal the CPU backend bitwise", "[gpu-device]") {
  auto gpu = Cuda();
  auto cpu = MakeCpuBackend();
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    data::gen::Rng rng(seed);
    // The last seeds: more elements than one launch's blocks cover.
    const size_t width = 1 + rng.Below(64), groups = 1 + rng.Below(500);
    const size_t n = seed > 37 ? 300000 : rng.Below(5000);
    const size_t src_stride = width + rng.Below(3), out_stride = width + rng.Below(3);
    INFO("seed " << seed << " width " << width << " groups " << groups << " n " << n);
    std::vector<uint32_t> index(n);
    for (uint32_t& i : index) i = static_cast<uint32_t>(rng.Below(groups));
    std::vector<float> src(groups * src_stride), in(n * out_stride);
    for (float& x : src) x = RandomValue(rng);
    for (float& x : in) x = RandomValue(rng);
    // Gather: groups rows out to n.
    std::vector<float> want(n * out_stride, 7.0f), got(want.size());
    cpu->GatherRows(src.data(), src_stride, width, index.data(), n, want.data(), out_stride);
    float* d_src = gpu->Allocate(src.size());
    float* d_out = gpu->Allocate(want.size() + 1);
    gpu->Upload(d_src, src.data(), src.size());
    std::vector<float> sevens(want.size(), 7.0f);
    gpu->Upload(d_out, sevens.data(), sevens.size());
    gpu->GatherRows(d_src, src_stride, width, index.data(), n, d_out, out_stride);
    gpu->Download(got.data(), d_out, got.size());
    CHECK(SameBits(got, want));
    // Sum: n rows back to groups, ascending sample order.
    std::vector<float> want_sum(groups * src_stride, 3.0f), got_sum(want_sum.size());
    cpu->SumRowsByIndex(in.data(), out_stride, width, index.data(), n, groups, want_sum.data(), src_stride);
    float* d_in = gpu->Allocate(in.size() + 1);
    gpu->Upload(d_in, in.data(), in.size());
    std::vector<float> threes(want_sum.size(), 3.0f);
    gpu->Upload(d_src, threes.data(), threes.size());
    gpu->SumRowsByIndex(d_in, out_stride, width, index.data(), n, groups, d_src, src_stride);
    gpu->Download(got_sum.data(), d_src, got_sum.size());
    CHECK(SameBits(got_sum, want_sum));
    gpu->Free(d_src);
    gpu->Free(d_out);
    gpu->Free(d_in);
  }
}

TEST_CASE("the CUDA backend names its device and versions", "[gpu-device]") {
  if (OnCpu()) return;
  const std::string name = Cuda()->name();
  INFO(name);
  CHECK_THAT(name, Catch::StartsWith("cuda (device 0: "));
  CHECK_THAT(name, Catch::Contains("compute "));
  CHECK_THAT(name, Catch::Contains("CUDA runtime "));
  CHECK_THAT(name, Catch::Contains("cuBLAS "));
}

}  // namespace actorrec::gpu

namespace actorrec::trainer {

// The equivalence matrix (device_matrix.hpp, which the host tests run on
// the fake device backend): every mode × L ∈ {1, 3, 20} × W ∈ {1, 2}
// equals no_cache on the GPU bitwise, and a resumed GPU run the straight one.
TEST_CASE("DLRM on the GPU: every mode, L = 1, 3, 20 and W = 1, 2 equal no_cache bitwise", "[gpu-device]") {
  CheckDeviceModeMatrix(DeviceMatrixCase(gpu::OnCpu() ? "cpu" : "cuda"), "cuda, sum pooling");
}

TEST_CASE("DLRM on the GPU with dedup groups: every mode, W = 1, 2, sum and mean pooling equal no_cache bitwise",
          "[gpu-device]") {
  CheckDeviceDedupMatrix(DeviceMatrixCase(gpu::OnCpu() ? "cpu" : "cuda"), "cuda");
}

TEST_CASE("DLRM on the GPU: a run resumed from a checkpoint equals the straight run bitwise", "[gpu-device]") {
  CheckDeviceResume(DeviceMatrixCase(gpu::OnCpu() ? "cpu" : "cuda"), "cuda");
}

// Several GPUs in one process (training.devices, docs/gpu.md): W = 2 on
// devices 0 and 1 ends with the bits of W = 2 sharing device 0 (the same
// GPU model: cuBLAS picks the same kernels), on the lockstep driver (one
// thread drives both backends, so every op must select its device) and on
// the actor pipeline summing over NCCL (ranks made together in one group).
TEST_CASE("DLRM on two GPUs of one process equals the same run on one GPU bitwise, summed over NCCL too",
          "[gpu-device]") {
  if (gpu::OnCpu() || gpu::ProbeDevices().cuda_devices < 2) {
    WARN("fewer than two usable CUDA devices: trainers on several GPUs are not checked");
    return;
  }
  Case c = DeviceMatrixCase("cuda");
  c.trainers = 2;
  c.mode = "lrpp_delayed";
  c.devices = "[0]";
  const uint64_t one_gpu = LockstepDigest(c);
  c.devices = "[0, 1]";
  CHECK(LockstepDigest(c) == one_gpu);
  c.collective = "nccl";
  CHECK(PipelineDigest(c) == one_gpu);
}

TEST_CASE("DLRM on the GPU with mean pooling ends bitwise equal in every mode, W = 1 and 2", "[gpu-device]") {
  for (int w : {1, 2}) {
    Case c;
    c.backend = gpu::OnCpu() ? "cpu" : "cuda";
    c.trainers = w;
    c.pooling = "mean";
    c.sparse = "adagrad";
    CheckEveryModeEqualsNoCache(c, "W=" + std::to_string(w) + " mean");
  }
}

TEST_CASE("DLRM with a dense dedup group trained on the GPU ends bitwise equal in every mode", "[gpu-device]") {
  for (int w : {1, 2}) {
    Case c;
    c.backend = gpu::OnCpu() ? "cpu" : "cuda";
    c.trainers = w;
    c.session_length = 8;
    c.session_dup = "[0.95, 0.95, 0.6, 0.0]";
    c.session_dense_dup = 0.9;
    c.dedup_groups = {"[0, 1]\ndense = true", "[2]"};
    CheckEveryModeEqualsNoCache(c, "dense dedup W=" + std::to_string(w));
  }
}

// The device's GEMMs sum in another order than oneDNN's (each within 1e-5
// relative, tested above) and BCE's exp/log1p differ in the last bits
// (docs/gpu.md), so a GPU run is not the CPU's bitwise; over the test's
// short run the dense parameters stay within kTrainTolerance of the CPU's,
// relative to the largest parameter. The bound is a first guess, not yet
// measured on a GPU (docs/gpu.md); the test prints the ratio it saw. With
// ACTORREC_GPU_TESTS_ON_CPU both runs are the CPU's and the ratio is 0.
constexpr double kTrainTolerance = 1e-3;

TEST_CASE("Wide&Deep, DeepFM and DCN trained on the GPU end bitwise equal across modes, W = 1 and 2", "[gpu-device]") {
  for (const char* model : {"wide_deep", "deepfm", "dcn"}) {
    for (int w : {1, 2}) {
      Case c;
      c.model = model;
      c.backend = gpu::OnCpu() ? "cpu" : "cuda";
      c.trainers = w;
      c.sparse = "adagrad";
      const uint64_t reference = LockstepDigest(c);
      c.cache_rows = 512;
      c.mode = "ideal";
      INFO(model << " W=" << w << " ideal");
      CHECK(LockstepDigest(c) == reference);
      c.cache_rows = 8192;
      c.mode = "lrpp";
      INFO(model << " W=" << w << " lrpp");
      CHECK(LockstepDigest(c) == reference);
    }
  }
}

TEST_CASE("the device-resident models trained on the GPU stay within a bound of the CPU", "[gpu-device]") {
  for (const char* model : {"dlrm", "wide_deep", "deepfm", "dcn"})
  for (int w : {1, 2}) {
    Case c;
    c.model = model;
    c.trainers = w;
    c.sparse = "adagrad";
    c.backend = "cpu";
    std::vector<float> cpu, gpu;
    LockstepDigest(c, nullptr, {}, &cpu);
    c.backend = gpu::OnCpu() ? "cpu" : "cuda";
    LockstepDigest(c, nullptr, {}, &gpu);
    REQUIRE(cpu.size() == gpu.size());
    double largest = 0, worst = 0;
    for (size_t k = 0; k < cpu.size(); ++k) {
      largest = std::max(largest, std::fabs(double(cpu[k])));
      worst = std::max(worst, std::fabs(double(cpu[k]) - gpu[k]));
    }
    INFO(model << " W=" << w << ": largest |Δ| " << worst << " of largest |p| " << largest);
    CHECK(worst <= kTrainTolerance * largest);
    WARN(model << " W=" << w << " GPU vs CPU dense parameters: max |delta| / max |p| = " << worst / largest);
  }
}

}  // namespace actorrec::trainer
