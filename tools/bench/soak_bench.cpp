// Soak: does a long run's memory stay flat? Trains many small batches of
// generated Criteo-Kaggle-shaped data in ONE epoch, twice as long as the run
// so that its reader lives to the last batch (whatever a run keeps per batch
// or per sample of its epoch shows), on the actor pipeline
// or the lockstep driver, and samples the process's resident memory
// (VmRSS of /proc/self/status) and malloc's bytes in use (mallinfo2) at
// fixed batch counts. It prints them and RSS at the end over RSS at 25 % of
// the run (after warm-up); the goal is <= 1.05.
//
// Usage: soak_bench [batches, default 20000] [batch size, default 128]
//                   [mode, default lrpp_delayed] [driver: actors (default) | lockstep]
//
// The tables are at 1/1000 of Criteo Kaggle (33.8 k rows, 4.3 MB of row
// state at most): the shards create a row when training first touches it,
// a legitimate growth that ends during warm-up here (the shard rows are
// printed beside). The MLPs are small (bottom 13-64-16, top 64-1) so that a
// batch costs little compute and 20 000 batches take minutes on 2 cores;
// the lookahead is short (4 batches) so that rows are evicted and written
// back every batch, and the cache (20 000 rows a trainer) holds any window
// of 5 batches of 128 (16 640 rows at most): an automatic lookahead, chosen
// from the first batches, ran out of slots at batch 3367.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "tools/bench/bench_cli.hpp"

using namespace actorrec;

namespace {

// Samples per run: 20 sample points, plus the start.
constexpr int kPoints = 20;

std::string ConfigText(const std::string& mode, uint64_t batches, int batch_size) {
  std::ostringstream t;
  t << "[run]\nname = \"soak-bench\"\nseed = 1\n"
       "[model]\nkind = \"dlrm\"\nembedding_dim = 16\nbottom_mlp = [64, 16]\ntop_mlp = [64, 1]\n"
       "[optimizer]\ndense = \"adam\"\ndense_lr = 0.001\nsparse = \"adagrad\"\nsparse_lr = 0.05\n"
       "[dataset]\nsource = \"generated\"\npreset = \"criteo-kaggle\"\nsamples = "
    << 2 * batches * static_cast<uint64_t>(batch_size) << "\neval_samples = 0\nrow_scale = 0.001\n"
    << "[training]\nmode = \"" << mode << "\"\nbatch_size = " << batch_size << "\nmax_batches = " << batches
    << "\nlookahead = 4\ncache_rows = 20000\n"
       "[cluster]\nsecret = \"soak-bench-secret-0000\"\n[[cluster.member]]\nname = \"l\"\naddress = \"127.0.0.1\"\n"
       "roles = [\"all\"]\ntrainers = 2\nembedding_shards = 2\n";
  return t.str();
}

// Resident memory of this process in kB (0 when /proc is not there).
uint64_t ResidentKb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      uint64_t kb = 0;
      status >> kb;
      return kb;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

// Bytes malloc has handed out and not got back (every arena, mmapped blocks too).
uint64_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

struct Point {
  uint64_t batch = 0, rss_kb = 0, heap = 0, shard_rows = 0;
};

template <class Run>
int Soak(const std::string& mode, uint64_t batches, int batch_size) {
  const config::Config cfg = config::ParseConfig(ConfigText(mode, batches, batch_size), "soak_bench");
  auto run = Run::Create(cfg);
  if (!run.ok()) {
    std::fprintf(stderr, "soak_bench: %s\n", run.status().message().c_str());
    return 1;
  }
  const uint64_t every = std::max<uint64_t>(1, batches / kPoints);
  std::vector<Point> points;
  auto sample = [&](uint64_t b) -> bool {
    auto usage = (*run)->ShardUsages();
    if (!usage.ok()) {
      std::fprintf(stderr, "soak_bench: %s\n", usage.status().message().c_str());
      return false;
    }
    Point p{b, ResidentKb(), HeapInUse(), 0};
    for (const auto& u : *usage) p.shard_rows += u.rows;
    points.push_back(p);
    std::printf("%8llu  %9.1f  %12.1f  %10llu\n", static_cast<unsigned long long>(p.batch), p.rss_kb / 1024.0,
                p.heap / 1048576.0, static_cast<unsigned long long>(p.shard_rows));
    std::fflush(stdout);
    return true;
  };
  std::printf("%8s  %9s  %12s  %10s\n", "batch", "RSS MiB", "malloc MiB", "shard rows");
  const auto start = std::chrono::steady_clock::now();
  trainer::StepReport step;
  uint64_t done = 0;
  if (!sample(0)) return 1;
  for (;;) {
    auto more = (*run)->Step(&step);
    if (!more.ok()) {
      std::fprintf(stderr, "soak_bench: %s\n", more.status().message().c_str());
      return 1;
    }
    if (!*more) break;
    if (++done % every == 0 && !sample(done)) return 1;
  }
  if (Status st = (*run)->Finish(); !st.ok()) {
    std::fprintf(stderr, "soak_bench: %s\n", st.message().c_str());
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // After warm-up: the first point at or past a quarter of the run.
  const Point* quarter = &points.back();
  for (const Point& p : points) {
    if (p.batch * 4 >= done) {
      quarter = &p;
      break;
    }
  }
  const Point& end = points.back();
  const double rss_ratio = static_cast<double>(end.rss_kb) / std::max<uint64_t>(1, quarter->rss_kb);
  const double heap_ratio = static_cast<double>(end.heap) / std::max<uint64_t>(1, quarter->heap);
  const double per_batch = end.batch > quarter->batch ? (static_cast<double>(end.rss_kb) - quarter->rss_kb) * 1024.0 /
                                                            static_cast<double>(end.batch - quarter->batch)
                                                      : 0.0;
  std::printf("%llu batches of %d in %.0f s; from batch %llu (25 %%) to %llu: RSS %.1f -> %.1f MiB, ratio %.3f "
              "(goal <= 1.05), %.0f bytes a batch; malloc in use %.1f -> %.1f MiB, ratio %.3f\n",
              static_cast<unsigned long long>(done), batch_size, seconds,
              static_cast<unsigned long long>(quarter->batch), static_cast<unsigned long long>(end.batch),
              quarter->rss_kb / 1024.0, end.rss_kb / 1024.0, rss_ratio, per_batch, quarter->heap / 1048576.0,
              end.heap / 1048576.0, heap_ratio);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t batches = 20000;
  int batch_size = 128;
  std::string mode = "lrpp_delayed", driver = "actors";
  CLI::App app{"Memory of a long run: resident memory and malloc's bytes in use sampled over many small batches of "
               "one epoch.",
               "soak_bench"};
  app.add_option("batches", batches, "batches (default 20000)")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("batch_size", batch_size, "samples per batch (default 128)")->check(CLI::Range(1, 1 << 24));
  app.add_option("mode", mode, "training.mode (default lrpp_delayed)")
      ->check(CLI::IsMember({"ideal", "no_cache", "static_hot", "replicated", "lrpp", "lrpp_delayed"}));
  app.add_option("driver", driver, "actors or lockstep (default actors)")->check(CLI::IsMember({"actors", "lockstep"}));
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) return code;
  std::printf("soak: %llu batches of %d, %s on the %s\n", static_cast<unsigned long long>(batches), batch_size,
              mode.c_str(), driver == "actors" ? "actor pipeline" : "lockstep driver");
  return driver == "actors" ? Soak<trainer::PipelineRun>(mode, batches, batch_size)
                            : Soak<trainer::LockstepRun>(mode, batches, batch_size);
}
