// Oracle planning throughput on Criteo-Kaggle-shaped batches: samples
// planned per second on one core, against the Bagpipe paper's 3.27 M/s, and
// how the time per batch moves with the lookahead and the batch size.
//
// Usage: oracle_bench [measured batches per row, default 60] [row, default
// all; one past the last planning row: the dedup table alone] [--csv FILE]
// (`oracle_bench --help` says the same.)
//
// What is timed, in thread CPU time, the median over the measured batches
// (the median because other processes' time slices evict the planner's
// caches on a shared machine): per global batch, BatchRowsBuilder::Build (the per-slice
// dedup of the KJT), Planner::Push and Planner::PlanNext (W plans, features
// translated to slots). Not timed: generating the ids, 32 batches ahead
// (kGenerateAhead; `made` says "ahead"); the last row generates each batch
// just before planning it ("between"). Each row first runs 2L + 2 batches
// untimed, so that slots are being reused from quarantine and the window is
// full when timing starts. The `kernel` column names the code of the dedup
// and of the plan passes (Kernel: AVX-512 where the CPU has it); the row
// before the last runs the portable one, as a CPU without AVX-512 would. A
// second table times the two dedup kernels alone, per id, on tables of five
// sizes.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/planner.hpp"
#include "tools/bench/bench_cli.hpp"
#include "data/gen/generator_options.hpp"

using namespace actorrec;
using namespace actorrec::oracle;

namespace {

// Criteo Kaggle (Display Advertising Challenge) cardinalities of C1 … C26.
const std::vector<uint64_t>& kKaggleRows = data::gen::CriteoKaggleRows();

constexpr double kBagpipeSamplesPerSecond = 3.27e6;

// Zipf(alpha) ranks by inverse CDF of the continuous power law on [1, n + 1),
// scattered over the id space by a multiplicative bijection (as hashed or
// dictionary-ordered preprocessing leaves them: the harder case for the
// per-row state's caches), or, `ranked`, ids in frequency order (as a
// converter that renumbers rows by frequency would leave them).
class ZipfIds {
 public:
  ZipfIds(uint64_t n, double alpha, bool ranked) : n_(n), alpha_(alpha), ranked_(ranked) {
    if (alpha != 1.0) {
      scale_ = std::pow(double(n) + 1, 1 - alpha) - 1;
      inv_ = 1 / (1 - alpha);
    } else {
      scale_ = std::log(double(n) + 1);
    }
  }
  data::RowId operator()(double u) const {
    const double x = alpha_ != 1.0 ? std::pow(scale_ * u + 1, inv_) : std::exp(scale_ * u);
    uint64_t rank = static_cast<uint64_t>(x) - 1;
    if (rank >= n_) rank = n_ - 1;
    if (ranked_) return static_cast<data::RowId>(rank);
    // 2654435761 is prime and above every cardinality: coprime to n.
    return static_cast<data::RowId>(rank * 2654435761ull % n_);
  }

 private:
  uint64_t n_;
  double alpha_;
  bool ranked_;
  double scale_ = 0, inv_ = 0;
};

struct Row {
  uint32_t batch, trainers, lookahead;
  double alpha;
  bool ranked = false;
  Kernel kernel = Kernel::kBest;
  bool generated_between = false;  // each batch's ids generated just before it is planned
};

// How many batches' ids are generated at a time, ahead of planning and
// untimed. The planner then runs batch after batch, as the oracle actor does
// when it is the bottleneck. Generated one by one, the ids (about 8 ms of `pow` a
// batch on this core) come between every two batches planned, long enough
// for the planner's caches to go cold: rows with `generated_between` show
// that case. 32 batches of 16384 samples are 54 MB, beyond the L3, so the
// planner still reads each batch's ids from DRAM.
constexpr uint32_t kGenerateAhead = 32;

struct Measured {
  std::vector<double> build_s, push_s, plan_s;  // per batch
  uint64_t batches = 0, shared = 0, privates = 0, fetched = 0;
  uint32_t peak = 0;
  bool vectorized = false;  // the dedup and the plan passes ran the AVX-512 kernels
};

// CPU time of this thread: the machine may be shared, and other processes'
// time slices are not the planner's.
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// A batch of `samples` samples with one id per table (ids left to fill).
data::SampleBlock OneHotBatch(size_t tables, uint32_t samples) {
  data::SampleBlock batch;
  batch.Reset(0, tables);
  batch.labels.assign(samples, 0.0f);
  for (auto& t : batch.tables) {
    t.values.resize(samples);
    t.offsets.SetSingleHot(samples);  // as the readers leave single-hot tables
  }
  return batch;
}

Measured Run(const Row& row, uint32_t measured) {
  PlannerOptions options;
  options.trainers = row.trainers;
  options.table_rows = kKaggleRows;
  options.partitions = OnePartition(kKaggleRows.size(), 1u << 30);  // measure, do not limit
  options.lookahead = row.lookahead;
  options.kernel = row.kernel;
  Planner planner(options);
  BatchRowsBuilder builder(kKaggleRows, row.kernel);
  std::vector<ZipfIds> ids;
  for (uint64_t n : kKaggleRows) ids.emplace_back(n, row.alpha, row.ranked);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);

  data::SampleBlock batch = OneHotBatch(kKaggleRows.size(), row.batch);
  const uint64_t warm = 2 * uint64_t{row.lookahead} + 2;
  Measured m;
  m.vectorized = builder.vectorized();
  BatchPlan plan;
  // ahead[i][t]: the ids of table t in the i-th batch of the block.
  std::vector<std::vector<std::vector<data::RowId>>> ahead(row.generated_between ? 1 : kGenerateAhead);
  for (uint64_t b = 0; m.batches < measured; ++b) {
    if (b % ahead.size() == 0) {
      for (auto& tables : ahead) {
        tables.resize(kKaggleRows.size());
        for (size_t t = 0; t < kKaggleRows.size(); ++t) {
          tables[t].resize(row.batch);
          for (auto& v : tables[t]) v = ids[t](uniform(rng));
        }
      }
    }
    for (size_t t = 0; t < kKaggleRows.size(); ++t) batch.tables[t].values.swap(ahead[b % ahead.size()][t]);
    const bool timed = b >= warm + row.lookahead;  // plans of batches >= warm
    const double t0 = ThreadSeconds();
    if (!planner.CanPush()) {
      if (Status s = planner.PlanNext(&plan); !s.ok()) std::abort();
    }
    const double t1 = ThreadSeconds();
    BatchRows rows = planner.RecycledRows();
    if (Status s = builder.Build(batch, row.trainers, &rows); !s.ok()) std::abort();
    const double t2 = ThreadSeconds();
    if (Status s = planner.Push(std::move(rows)); !s.ok()) std::abort();
    const double t3 = ThreadSeconds();
    if (timed) {
      m.build_s.push_back(t2 - t1);
      m.push_s.push_back(t3 - t2);
      m.plan_s.push_back(t1 - t0);
      ++m.batches;
      m.peak = std::max(m.peak, plan.occupancy);
      m.shared += plan.critical.size() + plan.delayed.size();
      m.fetched += plan.prefetch.size();
      for (const auto& own : plan.trainers) {
        m.fetched += own.private_prefetch.size();
        m.privates += own.private_rows.size();
      }
    }
  }
  return m;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Print(const Row& row, const Measured& m, bench::CsvTable* csv) {
  std::vector<double> total(m.build_s.size());
  for (size_t i = 0; i < total.size(); ++i) total[i] = m.build_s[i] + m.push_s[i] + m.plan_s[i];
  const double per_batch = Median(total);
  const double rate = row.batch / per_batch;
  std::printf("%6u %3u %4u %5.2f %-9s %-8s %-7s | %6.2f %6.2f %6.2f %7.2f | %8.2f %7.2fx | %7.0f %7.0f %7.0f %8u\n",
              row.batch, row.trainers, row.lookahead, row.alpha, row.ranked ? "ranked" : "scattered",
              m.vectorized ? "avx512" : "portable", row.generated_between ? "between" : "ahead",
              1e3 * Median(m.build_s), 1e3 * Median(m.push_s),
              1e3 * Median(m.plan_s),
              1e3 * per_batch, rate / 1e6, rate / kBagpipeSamplesPerSecond, double(m.shared) / m.batches,
              double(m.privates) / m.batches, double(m.fetched) / m.batches, m.peak);
  std::fflush(stdout);
  using bench::Num;
  csv->Row({std::to_string(row.batch), std::to_string(row.trainers), std::to_string(row.lookahead), Num(row.alpha),
            row.ranked ? "ranked" : "scattered", m.vectorized ? "avx512" : "portable",
            row.generated_between ? "between" : "ahead", Num(1e3 * per_batch), Num(rate / 1e6),
            Num(rate / kBagpipeSamplesPerSecond), Num(double(m.shared) / m.batches),
            Num(double(m.privates) / m.batches), Num(double(m.fetched) / m.batches), std::to_string(m.peak)});
}

// The dedup kernels alone, per id: one table of `table_rows` rows, global
// batches of 16384 Zipf(1.05) scattered ids cut into 8 slices of 2048 (the
// headline's slices), both kernels on the same batches. Median batch.
void PrintDedupPerId(uint64_t table_rows, uint32_t measured) {
  const uint32_t samples = 16384, trainers = 8;
  const std::vector<uint64_t> one_table = {table_rows};
  BatchRowsBuilder best(one_table, Kernel::kBest), portable(one_table, Kernel::kPortable);
  const ZipfIds ids(table_rows, 1.05, /*ranked=*/false);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  data::SampleBlock batch = OneHotBatch(1, samples);
  std::vector<double> best_s, portable_s;
  uint64_t distinct = 0;
  BatchRows a, b;
  for (uint32_t k = 0; k < measured + 5; ++k) {
    for (auto& v : batch.tables[0].values) v = ids(uniform(rng));
    const double t0 = ThreadSeconds();
    if (Status s = best.Build(batch, trainers, &a); !s.ok()) std::abort();
    const double t1 = ThreadSeconds();
    if (Status s = portable.Build(batch, trainers, &b); !s.ok()) std::abort();
    const double t2 = ThreadSeconds();
    if (a.slices != b.slices) std::abort();  // the kernels must agree
    if (k < 5) continue;                     // warm the scratch
    best_s.push_back(t1 - t0);
    portable_s.push_back(t2 - t1);
    for (const SliceTable& s : a.slices) distinct += s.rows.size();
  }
  const double per_id = 1e9 / samples;
  const double portable_ns = Median(portable_s) * per_id, best_ns = Median(best_s) * per_id;
  std::printf("%9lu %12s | %8.2f %8.2f %7.2fx | %6.1f %%\n", static_cast<unsigned long>(table_rows),
              table_rows > BatchRowsBuilder::kDirectRows ? "hash set"
              : table_rows > BatchRowsBuilder::kTinyRows ? "direct"
                                                          : "direct, tiny",
              portable_ns, best_ns, portable_ns / best_ns,
              100.0 * double(distinct) / (double(measured) * samples));
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t measured = 60;
  int only = -1;  // run one row of the table
  std::string csv_path;
  CLI::App app{"Oracle planning throughput on Criteo-Kaggle-shaped batches (26 tables, Zipf ids), one core, against "
               "the Bagpipe paper's 3.27 M samples/s; then the dedup kernels alone per id.",
               "oracle_bench"};
  app.add_option("measured", measured, "timed batches per row of the table (default 60)")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1000000}));
  app.add_option("row", only, "run only this row of the table (0-based; 16: the dedup table alone; default all)")
      ->check(CLI::Range(0, 16));
  bench::AddCsvFlag(app, &csv_path);
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) return code;
  bench::CsvTable csv(csv_path, {"batch", "W", "L", "alpha", "ids", "kernel", "made", "ms_per_batch",
                                 "M_samples_per_s", "vs_bagpipe", "shared", "private", "fetched", "peak_occupancy"});
  std::printf("oracle planning, Criteo Kaggle shape (26 tables, one id each), Zipf ids, one core (thread CPU time)\n");
  std::printf("%6s %3s %4s %5s %-9s %-8s %-7s | %6s %6s %6s %7s | %8s %8s | %7s %7s %7s %8s\n", "batch", "W", "L",
              "alpha", "ids", "kernel", "made", "dedup", "push", "plan", "ms/bat", "M samp/s", "/Bagpipe", "shared", "private", "fetched",
              "peak occ");
  const std::vector<Row> rows = {
      {16384, 8, 200, 1.05},  // the headline configuration
      {16384, 8, 200, 0.8},   {16384, 8, 200, 1.2},                         // skew
      {16384, 8, 1, 1.05},    {16384, 8, 10, 1.05},  {16384, 8, 50, 1.05},  // time vs L
      {16384, 8, 400, 1.05},
      {2048, 8, 200, 1.05},   {4096, 8, 200, 1.05},  {65536, 8, 50, 1.05},  // time vs batch size
      {16384, 1, 200, 1.05},  {16384, 32, 200, 1.05},                       // trainers
      {16384, 8, 200, 1.05, true}, {16384, 8, 200, 1.2, true},              // ids in frequency order
      {16384, 8, 200, 1.05, false, Kernel::kPortable},                 // without AVX-512
      {16384, 8, 200, 1.05, false, Kernel::kBest, true},               // ids made between batches
  };
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    if (only < 0 || only == i) Print(rows[i], Run(rows[i], measured), &csv);
  }
  // The dedup table is row rows.size() of the command line.
  if (only >= 0 && only != static_cast<int>(rows.size())) return 0;
  BatchRowsBuilder probe({1});
  std::printf("\ndedup alone (BatchRowsBuilder::Build of one table: checks, dedup, copies), ns per id;\n"
              "slices of 2048 Zipf(1.05) ids, portable kernel vs best (%s)\n",
              probe.vectorized() ? "AVX-512" : "no AVX-512 here: portable too");
  std::printf("%9s %12s | %8s %8s %8s | %8s\n", "rows", "structure", "portable", "best", "ratio", "new ids");
  for (uint64_t table_rows : {uint64_t{24}, uint64_t{583}, uint64_t{12517}, uint64_t{142572}, uint64_t{10131227}}) {
    PrintDedupPerId(table_rows, measured);
  }
  return 0;
}
