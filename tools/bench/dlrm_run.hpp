// The DLRM run that train_bench and gpu_slot_bench time: the Criteo Kaggle
// shape (embedding dim 16, bottom 13-512-256-64-16, top 512-256-1, plain
// SGD) on generated Criteo-shaped data, one mode on one driver, its rate and
// mean phase times after kWarmupBatches untimed batches.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "actors/common/step_report.hpp"
#include "configs/config.hpp"

namespace actorrec::bench {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kWarmupBatches = 2;

// The run's shape besides the mode.
struct Shape {
  int batches = 24;
  double row_scale = 0.05;
  int trainers = 2;
  int batch = 2048;               // global batch
  std::string backend = "auto";   // training.backend
};

inline std::string ConfigText(const std::string& mode, const Shape& shape) {
  std::ostringstream t;
  t << "[run]\nname = \"train-bench\"\nseed = 1\n"
       "[model]\nkind = \"dlrm\"\nembedding_dim = 16\nbottom_mlp = [512, 256, 64, 16]\ntop_mlp = [512, 256, 1]\n"
       "[optimizer]\ndense = \"sgd\"\ndense_lr = 0.1\nsparse = \"sgd\"\nsparse_lr = 0.1\n"
       "[dataset]\nsource = \"generated\"\npreset = \"criteo-kaggle\"\nsamples = "
    << shape.batch * shape.batches << "\neval_samples = 0\nrow_scale = " << shape.row_scale
    << "\n[training]\nmode = \"" << mode << "\"\nbatch_size = " << shape.batch << "\nbackend = \"" << shape.backend
    << "\"\nlookahead = 0\ncache_rows = 262144\n"
       "[cluster]\nsecret = \"train-bench-secret-0000\"\n[[cluster.member]]\nname = \"l\"\naddress = \"127.0.0.1\"\n"
       "roles = [\"all\"]\ntrainers = "
    << shape.trainers << "\nembedding_shards = 2\n";
  return t.str();
}

struct ModeResult {
  double samples_per_s = 0;
  trainer::StepReport mean;
};

template <class Run>
ModeResult RunMode(const std::string& mode, const Shape& shape) {
  const config::Config cfg = config::ParseConfig(ConfigText(mode, shape), "train_bench");
  auto run = Run::Create(cfg);
  if (!run.ok()) {
    std::fprintf(stderr, "%s: %s\n", mode.c_str(), run.status().message().c_str());
    std::exit(1);
  }
  ModeResult r;
  trainer::StepReport step;
  uint64_t timed = 0, samples = 0;
  Clock::time_point start;
  for (uint64_t b = 0;; ++b) {
    if (b == kWarmupBatches) start = Clock::now();
    auto more = (*run)->Step(&step);
    if (!more.ok()) {
      std::fprintf(stderr, "%s: %s\n", mode.c_str(), more.status().message().c_str());
      std::exit(1);
    }
    if (!*more) break;
    if (b < kWarmupBatches) continue;
    ++timed;
    samples += step.samples;
    r.mean.fetch_s += step.fetch_s;
    r.mean.forward_s += step.forward_s;
    r.mean.backward_s += step.backward_s;
    r.mean.dense_sync_s += step.dense_sync_s;
    r.mean.sparse_sync_s += step.sparse_sync_s;
    r.mean.write_back_s += step.write_back_s;
    r.mean.stream_wait_rows_s += step.stream_wait_rows_s;
    r.mean.stream_wait_sync_s += step.stream_wait_sync_s;
    r.mean.waits_on_device = step.waits_on_device;
    r.mean.unique_rows += step.unique_rows;
    r.mean.fetched_rows += step.fetched_rows;
    r.mean.written_rows += step.written_rows;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.samples_per_s = samples / seconds;
  const double d = timed ? static_cast<double>(timed) : 1.0;
  r.mean.fetch_s /= d, r.mean.forward_s /= d, r.mean.backward_s /= d, r.mean.dense_sync_s /= d, r.mean.sparse_sync_s /= d,
      r.mean.write_back_s /= d, r.mean.stream_wait_rows_s /= d, r.mean.stream_wait_sync_s /= d;
  r.mean.unique_rows = static_cast<uint64_t>(r.mean.unique_rows / d);
  r.mean.fetched_rows = static_cast<uint64_t>(r.mean.fetched_rows / d);
  r.mean.written_rows = static_cast<uint64_t>(r.mean.written_rows / d);
  return r;
}

}  // namespace actorrec::bench
