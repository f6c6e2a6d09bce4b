// The GPU data plane's figures (issue 22, item 5), each against a baseline
// measured in the same run on the same GPU:
//  - the slot gather and scatter kernels (gpu/cuda/slot_kernels, what
//    SlotArray runs) against cudaMemcpy device to device of the same bytes
//    (goal: at least 0.7 of its bandwidth);
//  - rows staged host to device through SlotArray::FillRows (the staging
//    ring, its pinned spans, the copy up and the scatter) against one
//    cudaMemcpy of the same bytes from pinned memory;
//  - DLRM in the Criteo Kaggle shape at batch 16384 (dlrm_run.hpp, the
//    actor pipeline, shards in host memory): the per-iteration time of
//    lrpp_delayed over ideal's (goal: within 10 %).
// Prints one table (and --csv FILE); without a usable CUDA device it says so
// and exits 77. Built only with CUDA.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "actors/run/pipeline_run.hpp"
#include "actors/trainer/slot_array.hpp"
#include "gpu/cuda/slot_kernels.cuh"
#include "gpu/cuda_backend.hpp"
#include "gpu/device_probe.hpp"
#include "models/optimizers.hpp"
#include "tools/bench/bench_cli.hpp"
#include "tools/bench/dlrm_run.hpp"

using namespace actorrec;

namespace {

struct Options {
  size_t rows = size_t{1} << 20;  // rows per copy
  int dim = 16;                   // embedding dim; rows carry row-wise Adagrad's accumulator: dim + 1 floats
  int reps = 20;
  int batch = 16384;
  int batches = 12;
  double row_scale = 0.05;
  int trainers = 1;
  bool skip_dlrm = false;
  std::string csv;
};

[[noreturn]] void Die(const char* what, cudaError_t err) {
  std::fprintf(stderr, "gpu_slot_bench: %s failed: %s: %s\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
  std::exit(1);
}
void Check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) Die(what, err);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median over `reps` of one enqueued operation's time on `stream`,
// by CUDA events around it (after one untimed run).
template <class Op>
double DeviceSeconds(cudaStream_t stream, int reps, Op&& op) {
  cudaEvent_t begin, end;
  Check(cudaEventCreate(&begin), "cudaEventCreate");
  Check(cudaEventCreate(&end), "cudaEventCreate");
  op();
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    Check(cudaEventRecord(begin, stream), "cudaEventRecord");
    op();
    Check(cudaEventRecord(end, stream), "cudaEventRecord");
    Check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return Median(times);
}

// The median over `reps` of a host call that returns when its work is done.
template <class Op>
double HostSeconds(int reps, Op&& op) {
  op();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = bench::Clock::now();
    op();
    times.push_back(std::chrono::duration<double>(bench::Clock::now() - start).count());
  }
  return Median(times);
}

// One line of the table: `what` took `seconds` for `bytes`, its baseline
// `base_seconds`; ratio = base_seconds / seconds (1: as fast as the
// baseline), at least `goal` (0: none).
struct Line {
  std::string what, baseline;
  double bytes, seconds, base_seconds, goal;
  double ratio() const { return base_seconds / seconds; }
  std::string Verdict() const { return goal == 0 ? "-" : ratio() >= goal ? "met" : "missed"; }
};

void Print(const Line& l, bench::CsvTable& csv) {
  const double gbs = l.bytes / l.seconds / 1e9, base_gbs = l.bytes / l.base_seconds / 1e9;
  const std::string goal = l.goal == 0 ? "-" : ">= " + bench::Num(l.goal);
  std::printf("%-30s %9.1f %9.1f  %-30s %7.3f %8s  %s\n", l.what.c_str(), gbs, base_gbs, l.baseline.c_str(), l.ratio(),
              goal.c_str(), l.Verdict().c_str());
  csv.Row({l.what, l.baseline, bench::Num(gbs), bench::Num(base_gbs), "GB/s", bench::Num(l.ratio()), goal, l.Verdict()});
}

// The copy kernels on a slot array of 2·rows slots, rows at distinct
// random slots (a fixed seed), against cudaMemcpy device to device of the
// rows' bytes.
void KernelLines(const Options& o, bench::CsvTable& csv) {
  const size_t row_floats = size_t(o.dim) + 1, slots = 2 * o.rows, floats = o.rows * row_floats;
  const double bytes = double(floats) * sizeof(float);
  std::vector<uint32_t> order(slots);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  order.resize(o.rows);
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  float *rows = nullptr, *staged = nullptr;
  uint32_t* slot_list = nullptr;
  Check(cudaMalloc(reinterpret_cast<void**>(&rows), slots * row_floats * sizeof(float)), "cudaMalloc (slots)");
  Check(cudaMalloc(reinterpret_cast<void**>(&staged), floats * sizeof(float)), "cudaMalloc (staging)");
  Check(cudaMalloc(reinterpret_cast<void**>(&slot_list), o.rows * sizeof(uint32_t)), "cudaMalloc (slot list)");
  Check(cudaMemset(rows, 0, slots * row_floats * sizeof(float)), "cudaMemset");
  Check(cudaMemset(staged, 0, floats * sizeof(float)), "cudaMemset");
  Check(cudaMemcpy(slot_list, order.data(), o.rows * sizeof(uint32_t), cudaMemcpyHostToDevice), "cudaMemcpy (slots)");
  const double copy = DeviceSeconds(stream, o.reps, [&] {
    Check(cudaMemcpyAsync(staged, rows, floats * sizeof(float), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (device to device)");
  });
  const double gather = DeviceSeconds(stream, o.reps, [&] {
    Check(gpu::cuda::LaunchGatherSlots(rows, row_floats, slot_list, o.rows, row_floats, staged, stream),
          "LaunchGatherSlots");
  });
  const double scatter = DeviceSeconds(stream, o.reps, [&] {
    Check(gpu::cuda::LaunchScatterSlots(staged, slot_list, o.rows, row_floats, rows, row_floats, stream),
          "LaunchScatterSlots");
  });
  const std::string base = "cudaMemcpy device to device";
  Print({"slot gather kernel", base, bytes, gather, copy, 0.7}, csv);
  Print({"slot scatter kernel", base, bytes, scatter, copy, 0.7}, csv);
  cudaFree(rows);
  cudaFree(staged);
  cudaFree(slot_list);
  cudaStreamDestroy(stream);
}

// Rows staged up through SlotArray::FillRows on the CUDA backend (host rows
// copied into the ring's pinned spans, each span copied up and scattered;
// until every copy is done) against cudaMemcpy of the same bytes from
// pinned memory.
void StagingLine(const Options& o, bench::CsvTable& csv) {
  auto made = gpu::MakeCudaBackend(0);
  if (!made.ok()) {
    std::fprintf(stderr, "gpu_slot_bench: %s\n", made.status().message().c_str());
    std::exit(1);
  }
  gpu::Backend& backend = **made;
  models::OptimizerSettings settings;
  const models::RowOptimizer optimizer(config::SparseOptimizer::kRowwiseAdagrad, settings, uint32_t(o.dim));
  const size_t row_floats = optimizer.row_floats(), floats = o.rows * row_floats;
  const double bytes = double(floats) * sizeof(float);
  std::vector<uint32_t> order(2 * o.rows);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(2));
  order.resize(o.rows);
  std::vector<float> source(floats, 0.5f);
  double staged = 0;
  {
    trainer::SlotArray slots(&backend, &optimizer);
    slots.Ensure(static_cast<uint32_t>(2 * o.rows));
    staged = HostSeconds(o.reps, [&] {
      slots.FillRows(order.data(), o.rows, [&](size_t i, float* dst) {
        std::memcpy(dst, source.data() + i * row_floats, row_floats * sizeof(float));
      });
      backend.WaitStaged(UINT64_MAX);  // every span copied up and scattered
    });
  }
  float *pinned = nullptr, *device = nullptr;
  Check(cudaHostAlloc(reinterpret_cast<void**>(&pinned), floats * sizeof(float), cudaHostAllocDefault),
        "cudaHostAlloc");
  Check(cudaMalloc(reinterpret_cast<void**>(&device), floats * sizeof(float)), "cudaMalloc");
  std::memcpy(pinned, source.data(), floats * sizeof(float));
  const double copy = HostSeconds(o.reps, [&] {
    Check(cudaMemcpy(device, pinned, floats * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy (host to device)");
  });
  Print({"H2D through the staging ring", "cudaMemcpy from pinned memory", bytes, staged, copy, 0}, csv);
  cudaFree(device);
  cudaFreeHost(pinned);
}

// DLRM at o.batch, ideal then lrpp_delayed on the actor pipeline with the
// CUDA backend: ratio = ideal's per-iteration time over lrpp_delayed's.
void DlrmLine(const Options& o, bench::CsvTable& csv) {
  bench::Shape shape;
  shape.batches = o.batches;
  shape.row_scale = o.row_scale;
  shape.trainers = o.trainers;
  shape.batch = o.batch;
  shape.backend = "cuda";
  const auto ideal = bench::RunMode<trainer::PipelineRun>("ideal", shape);
  const auto lrpp = bench::RunMode<trainer::PipelineRun>("lrpp_delayed", shape);
  const double ideal_s = o.batch / ideal.samples_per_s, lrpp_s = o.batch / lrpp.samples_per_s;
  std::printf("\nDLRM (Criteo Kaggle shape, row_scale %g), batch %d, %d trainer(s), actor pipeline, backend cuda, shards "
              "in host memory, %d batches (%llu untimed):\n",
              o.row_scale, o.batch, o.trainers, o.batches, static_cast<unsigned long long>(bench::kWarmupBatches));
  for (const auto& [name, r] : {std::pair{"ideal", &ideal}, std::pair{"lrpp_delayed", &lrpp}}) {
    std::printf("  %-13s %9.2f ms/iteration (%.0f samples/s); per batch: waited for rows %.2f ms, for sync %.2f ms "
                "(%s)\n",
                name, o.batch / r->samples_per_s * 1e3, r->samples_per_s, r->mean.stream_wait_rows_s * 1e3,
                r->mean.stream_wait_sync_s * 1e3, r->mean.waits_on_device ? "CUDA events" : "host clock");
  }
  const double ratio = lrpp_s / ideal_s;
  const char* verdict = ratio <= 1.10 ? "met" : "missed";
  std::printf("  lrpp_delayed / ideal per iteration: %.3f (goal <= 1.1): %s\n", ratio, verdict);
  csv.Row({"DLRM lrpp_delayed at batch " + std::to_string(o.batch), "ideal", bench::Num(lrpp_s * 1e3),
           bench::Num(ideal_s * 1e3), "ms/iteration", bench::Num(ratio), "<= 1.1", verdict});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"The GPU data plane against baselines on the same GPU: the slot gather and scatter kernels against "
               "cudaMemcpy device to device (goal >= 0.7), rows staged up through the staging ring against cudaMemcpy "
               "from pinned memory, and DLRM's per-iteration time in lrpp_delayed over ideal at batch 16384 "
               "(goal <= 1.1). Exits 77 without a usable CUDA device.",
               "gpu_slot_bench"};
  app.add_option("--rows", o.rows, "rows per copy (default 1048576)")->check(CLI::Range(size_t{1}, size_t{1} << 26));
  app.add_option("--dim", o.dim, "embedding dim; a row is dim + 1 floats, as with row-wise Adagrad (default 16)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--reps", o.reps, "timed repetitions of each copy, the median reported (default 20)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--batch", o.batch, "DLRM's global batch (default 16384)")->check(CLI::Range(1, 1 << 24));
  app.add_option("--batches", o.batches, "DLRM's batches per mode, the first 2 untimed (default 12)")
      ->check(CLI::Range(static_cast<int>(bench::kWarmupBatches) + 1, 1 << 20));
  app.add_option("--row-scale", o.row_scale, "DLRM's share of the Criteo Kaggle table sizes, in (0, 1] (default 0.05)")
      ->check(CLI::Range(1e-9, 1.0));
  app.add_option("--trainers", o.trainers, "DLRM's trainers, sharing the GPU (default 1)")->check(CLI::Range(1, 64));
  app.add_flag("--skip-dlrm", o.skip_dlrm, "only the copies, not DLRM");
  bench::AddCsvFlag(app, &o.csv);
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) return code;
  const gpu::DeviceProbe probe = gpu::ProbeDevices();
  if (probe.cuda_devices == 0) {
    std::printf("gpu_slot_bench: %s: nothing measured\n", probe.detail.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("gpu_slot_bench on device 0: %s; %zu rows of %d floats per copy (%.1f MiB), median of %d\n\n", prop.name,
              o.rows, o.dim + 1, double(o.rows) * (o.dim + 1) * 4 / (1 << 20), o.reps);
  // ratio: the copies' bandwidth over their baseline's (the larger the
  // better), DLRM's lrpp_delayed time over ideal's (the smaller the better).
  bench::CsvTable csv(o.csv, {"what", "baseline", "value", "baseline_value", "unit", "ratio", "goal", "verdict"});
  std::printf("%-30s %9s %9s  %-30s %7s %8s  %s\n", "what", "GB/s", "base GB/s", "baseline", "ratio", "goal",
              "verdict");
  KernelLines(o, csv);
  StagingLine(o, csv);
  if (!o.skip_dlrm) DlrmLine(o, csv);
  return 0;
}
