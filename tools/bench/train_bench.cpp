// Training throughput of DLRM in the Criteo Kaggle shape (embedding dim 16,
// bottom 13-512-256-64-16, top 512-256-1) on generated Criteo-shaped data,
// against the machine's own limit measured in the same run: the sgemm rate
// of the model's GEMM shapes, run on as many threads as there are trainers,
// divided by the model's GEMM FLOPs per sample (forward + backward).
//
// Usage: train_bench [batches, default 24] [row_scale, default 0.05] [trainers, default 2] [only]
//                    [--batch N, default 2048] [--backend cpu|cuda|auto, default auto]
//                    [--csv FILE]   (`train_bench --help` says the same)
// (`only`: run just the rows whose "mode (driver)" name contains it, e.g.
// "lrpp_delayed (actors)", to profile one of them.)
//
// It then runs every mode on the actor pipeline (and lrpp_delayed on the
// lockstep driver) on the same data and prints samples/s, the phase
// breakdown and the rows moved per batch. The first two
// batches of each run are not timed (allocation, cold caches).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "gpu/backend_select.hpp"
#include "models/model.hpp"
#include "tools/bench/bench_cli.hpp"
#include "tools/bench/dlrm_run.hpp"
#include "tools/bench/sgemm_rate.hpp"

using namespace actorrec;
using bench::kWarmupBatches;
using bench::ModeResult;
using bench::RunMode;
using bench::Shape;
using bench::ConfigText;


int main(int argc, char** argv) {
  Shape shape;
  int& batches = shape.batches;
  double& row_scale = shape.row_scale;
  int& trainers = shape.trainers;
  std::string only, csv_path;
  CLI::App app{"Training throughput of DLRM in the Criteo Kaggle shape on generated data, every mode on the actor "
               "pipeline (and lrpp_delayed on the lockstep driver), against the sgemm roofline measured in the same "
               "run.",
               "train_bench"};
  app.add_option("batches", batches, "batches per mode, the first 2 untimed (default 24)")
      ->check(CLI::Range(static_cast<int>(kWarmupBatches) + 1, 1 << 20));
  app.add_option("row_scale", row_scale, "share of the Criteo Kaggle table sizes, in (0, 1] (default 0.05)")
      ->check(CLI::Range(1e-9, 1.0));
  app.add_option("trainers", trainers, "trainers, one thread each (default 2)")->check(CLI::Range(1, 256));
  app.add_option("only", only, "run only the rows whose \"mode (driver)\" contains this, e.g. \"lrpp_delayed (actors)\"");
  app.add_option("--batch", shape.batch, "the global batch, split over the trainers (default 2048)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--backend", shape.backend, "training.backend: cpu, cuda or auto (default auto)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  bench::AddCsvFlag(app, &csv_path);
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) return code;
  bench::CsvTable csv(csv_path, {"mode", "driver", "samples_per_s", "per_roofline", "fetch_ms", "forward_ms",
                                 "backward_ms", "dense_sync_ms", "sparse_sync_ms", "write_back_ms", "fetched_rows",
                                 "written_rows", "time_vs_ideal"});
  const config::Config probe = config::ParseConfig(ConfigText("ideal", shape), "train_bench");
  const models::ModelSpec spec = models::SpecOf(probe.model, 13, 26);
  const double flops = models::MlpFlopsPerSample(spec);
  auto choice = gpu::ChooseBackend(probe.training.backend, models::ResidencyOf(probe.model.kind));
  if (!choice.ok()) {
    std::fprintf(stderr, "%s\n", choice.status().message().c_str());
    return 2;
  }
  std::printf("backend: %s\n", choice->Line().c_str());
  auto measured_rate = bench::MeasureSgemmRate(spec, shape.batch / trainers, trainers, *choice);
  if (!measured_rate.ok()) {
    std::fprintf(stderr, "%s\n", measured_rate.status().message().c_str());
    return 1;
  }
  const bench::SgemmRate rate = *measured_rate;
  const double gflops = rate.best;
  const double roofline = gflops * 1e9 / flops;
  std::printf("DLRM Criteo-Kaggle shape, global batch %d, %d trainer(s) on %d thread(s), row_scale %.3g\n", shape.batch,
              trainers, trainers, row_scale);
  std::printf("sgemm on the model's shapes: %.1f GFLOP/s over %d thread(s) (best of 5; the worst %.1f); %.2f MFLOP per "
              "sample -> roofline %.0f samples/s\n\n",
              gflops, trainers, rate.worst, flops / 1e6, roofline);
  std::printf("%-22s %11s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "mode (driver)", "samples/s", "/roofline",
              "fetch ms", "fwd ms", "bwd ms", "dense", "sparse", "wb ms", "fetched", "written");
  std::printf("(lockstep: phases one after another; actors: fetch = waiting for rows, dense = dense + critical sync,\n"
              " sparse and write-back in the background)\n");
  double ideal_rate = 0;
  struct Row {
    const char* mode;
    bool actors;
  };
  // Every mode on the actor pipeline, ideal first (the ratios' base), and
  // the lockstep driver on the default mode for comparison.
  for (const Row row : {Row{"ideal", true}, Row{"no_cache", true}, Row{"static_hot", true}, Row{"replicated", true},
                        Row{"lrpp", true}, Row{"lrpp_delayed", true}, Row{"lrpp_delayed", false}}) {
    const char* mode = row.mode;
    const std::string name = std::string(mode) + (row.actors ? " (actors)" : " (lockstep)");
    if (name.find(only) == std::string::npos) continue;
    ModeResult r = row.actors ? RunMode<trainer::PipelineRun>(mode, shape) : RunMode<trainer::LockstepRun>(mode, shape);
    if (std::string(mode) == "ideal") ideal_rate = r.samples_per_s;
    std::printf("%-22s %11.0f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9llu %9llu\n", name.c_str(),
                r.samples_per_s, r.samples_per_s / roofline, r.mean.fetch_s * 1e3, r.mean.forward_s * 1e3,
                r.mean.backward_s * 1e3, r.mean.dense_sync_s * 1e3,
                r.mean.sparse_sync_s * 1e3, r.mean.write_back_s * 1e3,
                static_cast<unsigned long long>(r.mean.fetched_rows),
                static_cast<unsigned long long>(r.mean.written_rows));
    using bench::Num;
    csv.Row({mode, row.actors ? "actors" : "lockstep", Num(r.samples_per_s), Num(r.samples_per_s / roofline),
             Num(r.mean.fetch_s * 1e3), Num(r.mean.forward_s * 1e3), Num(r.mean.backward_s * 1e3),
             Num(r.mean.dense_sync_s * 1e3), Num(r.mean.sparse_sync_s * 1e3), Num(r.mean.write_back_s * 1e3),
             std::to_string(r.mean.fetched_rows), std::to_string(r.mean.written_rows),
             Num(ideal_rate > 0 ? ideal_rate / r.samples_per_s : 0.0)});
    if (std::string(mode) != "ideal" && ideal_rate > 0) std::printf("%22s time per sample vs ideal: %.2fx\n", "", ideal_rate / r.samples_per_s);
  }
  return 0;
}
