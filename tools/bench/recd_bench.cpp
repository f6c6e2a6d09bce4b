// RecD end to end: deduplicated feature groups (dataset.dedup_groups) on the
// generator's session-structured data, swept over the DedupeFactor, dedup
// off against on, next to RecD's DedupeFactor model (data/stats).
//
// Usage: recd_bench [--factors 1,2,4,8,16] [--batches N] [--batch B] [--bag K] [--reps R] [--help]
//
// The data: 8 tables of 100,000 rows, bags of K ids (fixed), embedding dim
// 32. Tables 0-3 are the "user" side: within a session of S samples they keep
// their bags (session_dup 1), so their group's DedupeFactor is S under the
// model; tables 4-7, the "item" side, change every sample; the 13 dense
// features are the user's too (session_dense_dup 1). Sessions of S = the
// factor swept. Dedup on groups tables 0-3 and the dense features (one
// [[dataset.dedup_groups]] with dense = true: DLRM's bottom MLP per tuple).
//
// Per factor and dedup off/on it prints:
//  - emb ms: the trainer's embedding-bound part of one batch for the group's
//    tables, forward (PoolBySlot, with dedup + GatherRows) and backward
//    (BagGradToUnique, with dedup SumRowsByIndex first), best of R repeats,
//    one trainer slice = the whole batch;
//  - samples/s: `actorrec train`'s lockstep driver end to end (lrpp_delayed,
//    one trainer), the first 2 batches not timed, per wall second and per
//    CPU second of the process (robust to a shared machine); and where a batch's time
//    goes (the trainer's own timers): forward + backward (pooling, the
//    dedup ops, the model), and the rest (reading or generating the batch,
//    the group's dedup, planning, fetches, the row and dense updates);
//  - bytes per batch: sampler -> oracle (the Batch frame: KJT, or IKJT with
//    the group and every other table deduplicated alone) and oracle ->
//    trainer (the TrainerPlan frames of the trainers);
//  - ids planned (value positions the trainer pools) and rows fetched per
//    batch (the distinct rows: the same with and without dedup).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/run/lockstep_run.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "actors/trainer/trainer_core.hpp"
#include "configs/config.hpp"
#include "data/batches/batch.hpp"
#include "data/stats/dedupe_model.hpp"
#include "gpu/backend.hpp"
#include "messages/batch_codec.hpp"
#include "messages/plan_codec.hpp"
#include "tools/bench/bench_cli.hpp"

using namespace actorrec;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTables = 8;
constexpr int kGroupTables = 4;  // tables 0 .. 3
constexpr int kDim = 32;
constexpr uint64_t kWarmupBatches = 2;

struct Flags {
  std::vector<uint32_t> factors = {1, 2, 4, 8, 16};
  int batches = 12;
  int batch = 4096;
  int bag = 16;
  int reps = 5;
  std::string csv;  // --csv: the table's rows, for `actorrec bench recd`
};

// Parses the command line (tools/bench/bench_cli.hpp): exits 0 after
// --help, 2 naming a bad argument.
Flags ParseFlags(int argc, char** argv) {
  Flags f;
  CLI::App app{"RecD end to end: dedup groups off against on over session-structured generated data.", "recd_bench"};
  app.add_option("--factors", f.factors,
                 "session lengths S swept (the group's DedupeFactor under RecD's model), each >= 1")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1u << 24));
  app.add_option("--batches", f.batches, "batches per end-to-end run (the first 2 untimed)")
      ->check(CLI::Range(3, 1 << 24))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "samples per batch (a multiple of every factor)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--bag", f.bag, "ids per bag, every table")->check(CLI::Range(1, 1 << 24))->capture_default_str();
  app.add_option("--reps", f.reps, "repeats of the embedding-part timing, best kept")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  bench::AddCsvFlag(app, &f.csv);
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) std::exit(code);
  for (uint32_t s : f.factors) {
    if (f.batch % static_cast<int>(s) != 0) {
      std::fprintf(stderr, "recd_bench: --batch %d is not a multiple of the factor %u (sessions would straddle batches)\n",
                   f.batch, s);
      std::exit(2);
    }
  }
  return f;
}

std::string ConfigText(const Flags& f, uint32_t session, bool dedup) {
  std::ostringstream t;
  t << "[run]\nname = \"recd-bench\"\nseed = 1\n"
       "[model]\nkind = \"dlrm\"\nembedding_dim = "
    << kDim << "\nbottom_mlp = [64, " << kDim << "]\ntop_mlp = [64, 1]\n"
    << "[optimizer]\ndense = \"sgd\"\ndense_lr = 0.05\nsparse = \"sgd\"\nsparse_lr = 0.05\n"
       "[dataset]\nsource = \"generated\"\npreset = \"custom\"\ntable_rows = [100000, 100000, 100000, 100000, "
       "100000, 100000, 100000, 100000]\ndense_features = 13\nsamples = "
    << f.batch * f.batches << "\neval_samples = 0\n"
    << "[dataset.generator]\nskew = \"zipf\"\nbag = \"fixed\"\nbag_min = " << f.bag << "\nsession_length = " << session
    << "\nsession_dup = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]\nsession_dense_dup = 1.0\n";
  if (dedup) t << "[[dataset.dedup_groups]]\ntables = [0, 1, 2, 3]\ndense = true\n";
  t << "[training]\nmode = \"lrpp_delayed\"\nbatch_size = " << f.batch
    << "\nlookahead = 0\ncache_rows = 1048576\nbackend = \"cpu\"\n"
       "[cluster]\nsecret = \"recd-bench-secret-000\"\n[[cluster.member]]\nname = \"l\"\naddress = \"127.0.0.1\"\n"
       "roles = [\"all\"]\ntrainers = 1\nembedding_shards = 1\n";
  return t.str();
}

double Seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// The process's CPU seconds (every thread): what a run costs whatever else
// the machine runs, where wall time on a shared machine mostly measures the
// others.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The trainer's embedding-bound part for the group's tables on one batch:
// the features as a planner makes them (slots = the distinct rows), rows of
// a dense array, the backward's pooled gradient all ones.
double EmbeddingSeconds(const oracle::BatchRows& rows, uint32_t samples, int reps) {
  auto backend = gpu::MakeCpuBackend();
  const size_t stride = size_t{kTables} * kDim;
  std::vector<float> pooled(samples * stride), pooled_grad(samples * stride, 1.0f), tuple(samples * kDim),
      tuple_grad(samples * kDim);
  std::vector<oracle::TableFeatures> features(kGroupTables);
  std::vector<std::vector<float>> cache(kGroupTables), grads(kGroupTables);
  for (uint32_t t = 0; t < kGroupTables; ++t) {
    const oracle::SliceTable& s = rows.slice(0, t);
    features[t].unique_slots.resize(s.rows.size());
    std::iota(features[t].unique_slots.begin(), features[t].unique_slots.end(), 0u);
    features[t].inverse = s.inverse;
    features[t].offsets = s.offsets;
    cache[t].assign(s.rows.size() * kDim, 0.5f);
    grads[t].resize(s.rows.size() * kDim);
  }
  const std::vector<uint32_t>* bag_of = rows.group_count ? &rows.groups[0].bag_of : nullptr;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    for (uint32_t t = 0; t < kGroupTables; ++t) {
      const gpu::SlotBags bags = trainer::BagsOf(features[t]);
      float* out = pooled.data() + t * kDim;
      if (!bag_of) {
        backend->PoolBySlot(cache[t].data(), kDim, kDim, bags, gpu::Pooling::kSum, out, stride);
        backend->BagGradToUnique(pooled_grad.data() + t * kDim, stride, kDim, bags, gpu::Pooling::kSum,
                                 grads[t].data());
      } else {
        backend->PoolBySlot(cache[t].data(), kDim, kDim, bags, gpu::Pooling::kSum, tuple.data(), kDim);
        backend->GatherRows(tuple.data(), kDim, kDim, bag_of->data(), samples, out, stride);
        backend->SumRowsByIndex(pooled_grad.data() + t * kDim, stride, kDim, bag_of->data(), samples, bags.samples,
                                tuple_grad.data(), kDim);
        backend->BagGradToUnique(tuple_grad.data(), kDim, kDim, bags, gpu::Pooling::kSum, grads[t].data());
      }
    }
    best = std::min(best, Seconds(start));
  }
  return best;
}

struct Row {
  double emb_ms = 0, samples_per_s = 0, samples_per_cpu_s = 0, compute_ms = 0, rest_ms = 0;
  double sampler_bytes = 0, plan_bytes = 0, ids = 0, rows_fetched = 0, measured_factor = 0;
};

Row Measure(const Flags& f, uint32_t session, bool dedup) {
  Row row;
  const config::Config cfg = config::ParseConfig(ConfigText(f, session, dedup), "recd_bench.toml");
  // One batch, through what the sampler and the oracle do with it.
  auto reader = OpenEpoch(cfg, Split::kTrain, 0);
  if (!reader.ok()) {
    std::fprintf(stderr, "recd_bench: %s\n", reader.status().ToString().c_str());
    std::exit(1);
  }
  data::Batch batch;
  if (Status st = (*reader)->Next(static_cast<size_t>(f.batch), &batch.samples); !st.ok()) {
    std::fprintf(stderr, "recd_bench: %s\n", st.ToString().c_str());
    std::exit(1);
  }
  const std::vector<uint64_t> table_rows(kTables, 100000);
  oracle::BatchRowsBuilder builder(table_rows);
  builder.SetDedupGroups(cfg.dataset.dedup_groups);
  data::Ikjt ikjt;
  if (dedup) {
    ikjt = data::Deduplicate(batch.samples.tables, data::CompleteGroups(cfg.dataset.dedup_groups, kTables));
    row.sampler_bytes = static_cast<double>(wire::EncodeBatch(batch, &ikjt).bytes.size());
  } else {
    row.sampler_bytes = static_cast<double>(wire::EncodeBatch(batch).bytes.size());
  }
  const data::Ikjt group_only = data::Deduplicate(batch.samples.tables, {{0, 1, 2, 3}});
  std::vector<data::SampleBlock::Table> group_kjt(batch.samples.tables.begin(), batch.samples.tables.begin() + kGroupTables);
  row.measured_factor = data::DedupFactor(group_kjt, group_only);
  oracle::BatchRows rows;
  if (Status st = builder.Build(batch.samples, 1, &rows, dedup ? &ikjt : nullptr); !st.ok()) {
    std::fprintf(stderr, "recd_bench: %s\n", st.ToString().c_str());
    std::exit(1);
  }
  // The plan's features as the trainer receives them (the row lists are the
  // same with and without dedup: the same distinct rows).
  oracle::TrainerPlan plan;
  for (uint32_t t = 0; t < kTables; ++t) {
    const oracle::SliceTable& s = rows.slice(0, t);
    oracle::TableFeatures tf;
    tf.table = t;
    tf.unique_slots.resize(s.rows.size());
    std::iota(tf.unique_slots.begin(), tf.unique_slots.end(), 0u);
    tf.inverse = s.inverse;
    tf.offsets = s.offsets;
    row.ids += static_cast<double>(s.inverse.size());
    plan.features.push_back(std::move(tf));
  }
  if (rows.group_count) plan.bag_groups = {rows.groups[0]};
  row.plan_bytes = static_cast<double>(wire::EncodePlan(plan).bytes.size());
  row.emb_ms = EmbeddingSeconds(rows, static_cast<uint32_t>(f.batch), f.reps) * 1e3;

  // End to end.
  auto run = trainer::LockstepRun::Create(cfg);
  if (!run.ok()) {
    std::fprintf(stderr, "recd_bench: %s\n", run.status().ToString().c_str());
    std::exit(1);
  }
  trainer::StepReport step;
  Clock::time_point start;
  double cpu_start = 0;
  uint64_t timed = 0, batches = 0, fetched = 0;
  double compute_s = 0;
  while (true) {
    if (batches == kWarmupBatches) start = Clock::now(), cpu_start = CpuSeconds();
    auto more = (*run)->Step(&step);
    if (!more.ok()) {
      std::fprintf(stderr, "recd_bench: %s\n", more.status().ToString().c_str());
      std::exit(1);
    }
    if (!*more) break;
    if (batches >= kWarmupBatches) {
      timed += step.samples;
      compute_s += step.forward_s + step.backward_s;
    }
    fetched += step.fetched_rows;
    ++batches;
  }
  const double total_s = Seconds(start);
  row.samples_per_s = static_cast<double>(timed) / total_s;
  row.samples_per_cpu_s = static_cast<double>(timed) / (CpuSeconds() - cpu_start);
  const double timed_batches = static_cast<double>(batches - kWarmupBatches);
  row.compute_ms = compute_s / timed_batches * 1e3;
  row.rest_ms = (total_s - compute_s) / timed_batches * 1e3;
  row.rows_fetched = static_cast<double>(fetched) / static_cast<double>(batches);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = ParseFlags(argc, argv);
  std::string command = "recd_bench";
  for (int i = 1; i < argc; ++i) command.append(" ").append(argv[i]);
  std::printf("# %s\n# batch %d, bags of %d ids, %d tables (0-3 and the dense features grouped, session_dup 1; 4-7 "
              "dup 0), dim %d, 1 trainer\n",
              command.c_str(), f.batch, f.bag, kTables, kDim);
  std::printf("| factor S | model DF | measured DF | emb ms off | emb ms on | emb speedup | samples/s off | samples/s on "
              "| e2e speedup | samples/CPU-s off/on | e2e CPU speedup | fwd+bwd ms off/on | rest ms off/on | sampler->oracle KiB off/on | oracle->trainer KiB "
              "off/on | ids planned off/on | rows fetched off/on |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  bench::CsvTable csv(f.csv, {"factor", "model_df", "measured_df", "emb_ms_off", "emb_ms_on", "emb_speedup",
                              "samples_per_s_off", "samples_per_s_on", "e2e_speedup", "samples_per_cpu_s_off",
                              "samples_per_cpu_s_on", "e2e_cpu_speedup", "compute_ms_off", "compute_ms_on",
                              "rest_ms_off", "rest_ms_on", "sampler_kib_off",
                              "sampler_kib_on", "plan_kib_off", "plan_kib_on", "rows_fetched_off", "rows_fetched_on"});
  for (uint32_t s : f.factors) {
    const Row off = Measure(f, s, false), on = Measure(f, s, true);
    csv.Row({std::to_string(s), std::to_string(data::stats::ModelDedupeFactor(s, 1.0)),
             std::to_string(on.measured_factor), std::to_string(off.emb_ms), std::to_string(on.emb_ms),
             std::to_string(off.emb_ms / on.emb_ms), std::to_string(off.samples_per_s),
             std::to_string(on.samples_per_s), std::to_string(on.samples_per_s / off.samples_per_s),
             std::to_string(off.samples_per_cpu_s), std::to_string(on.samples_per_cpu_s),
             std::to_string(on.samples_per_cpu_s / off.samples_per_cpu_s), std::to_string(off.compute_ms), std::to_string(on.compute_ms), std::to_string(off.rest_ms),
             std::to_string(on.rest_ms),
             std::to_string(off.sampler_bytes / 1024), std::to_string(on.sampler_bytes / 1024),
             std::to_string(off.plan_bytes / 1024), std::to_string(on.plan_bytes / 1024),
             std::to_string(off.rows_fetched), std::to_string(on.rows_fetched)});
    std::printf("| %u | %.2f | %.2f | %.2f | %.2f | %.2fx | %.0f | %.0f | %.2fx | %.0f / %.0f | %.2fx | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f "
                "| %.0f / %.0f | %.0f / %.0f | %.0f / %.0f |\n",
                s, data::stats::ModelDedupeFactor(s, 1.0), on.measured_factor, off.emb_ms, on.emb_ms,
                off.emb_ms / on.emb_ms, off.samples_per_s, on.samples_per_s, on.samples_per_s / off.samples_per_s,
                off.samples_per_cpu_s, on.samples_per_cpu_s, on.samples_per_cpu_s / off.samples_per_cpu_s, off.compute_ms, on.compute_ms, off.rest_ms, on.rest_ms,
                off.sampler_bytes / 1024, on.sampler_bytes / 1024, off.plan_bytes / 1024, on.plan_bytes / 1024, off.ids,
                on.ids, off.rows_fetched, on.rows_fetched);
    std::fflush(stdout);
  }
  return 0;
}
