// The search of `actorrec plan --recommend`.
#include "tools/plan_recommend.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "actors/common/exit_codes.hpp"
#include "actors/run/run_parts.hpp"
#include "planner/cost_model.hpp"
#include "tools/plan_sample.hpp"

namespace actorrec {
namespace {

struct Sampled {
  planner::PlanRows rows;
  uint32_t lookahead = 0;
  uint64_t batches = 0;
};

// The plans of `batches` batches of cfg: rows per batch. Nothing when the
// cache is too small for the candidate (the reason in *why).
std::optional<Sampled> Sample(const config::Config& cfg, uint64_t batches, PlanSample* info, std::string* why) {
  PlanSample sample;
  sample.batches = batches;
  oracle::DumpReport report;
  if (Status s = MeasurePlans(cfg, &sample, &report); !s.ok() || report.batches == 0) {
    *why = s.ok() ? "no batch in the data" : s.message();
    return std::nullopt;
  }
  if (info != nullptr) *info = sample;
  Sampled out;
  out.rows = RowsOf(report.stats);
  out.lookahead = report.lookahead;
  out.batches = report.batches;
  return out;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int RunRecommend(const config::Config& base, uint64_t sample_batches, const std::string& hardware_path,
                 bool one_host, std::ostream& out, std::ostream& err) {
  auto loaded = planner::LoadProfile(hardware_path);
  if (!loaded.ok()) {
    err << "actorrec plan: " << loaded.status().message() << "\n";
    return kExitUsage;
  }
  const planner::HardwareProfile hw = *loaded;

  // The configured run first: it gives the schema and checks the data.
  PlanSample info;
  std::string why;
  const auto configured = Sample(base, sample_batches, &info, &why);
  if (!configured) {
    err << "actorrec plan: " << why << "\n";
    return kExitFailure;
  }
  auto workload = WorkloadOf(base, info, hw, one_host);
  if (!workload.ok()) return err << "actorrec plan: " << workload.status().message() << "\n", kExitFailure;
  const planner::Workload work = *workload;
  uint64_t total_rows = 0;
  for (const auto& t : info.schema.tables) total_rows += t.rows;

  out << "hardware " << hw.name << " (" << hardware_path << "): " << Fixed(hw.gemm_flops / 1e9, 1) << " GFLOP/s, "
      << Fixed(hw.memory_bw / 1e9, 1) << " GB/s memory, " << Fixed(hw.network_bw * 8 / 1e9, 2) << " Gbit/s links, "
      << Fixed(hw.network_latency * 1e6, 1) << " us latency, "
      << (hw.host_cores > 0 ? Fixed(hw.host_cores, 0) : std::string("?")) << " cores a host\n"
      << "run: " << work.trainers << " trainer(s), " << work.shards << " shard(s) on " << work.shard_hosts
      << " host(s), " << Fixed(work.flops_per_sample / 1e6, 2) << " MFLOP/sample, "
      << Fixed(work.dense_bytes / 1e6, 2) << " MB dense, rows of " << work.row_bytes << " bytes, "
      << Fixed(work.lookups_per_sample, 1) << " ids/sample; each trainer computes "
      << (hw.trainer_flops > 0 ? "at the calibrated " + Fixed(hw.trainer_flops / 1e9, 2) +
                                     " GFLOP/s (measured in place), spread " + Fixed(hw.trainer_spread, 3)
                               : "at " + Fixed(work.compute_share, 2) + " of a core")
      << ", sums by "
      << (work.collective == planner::Collective::kChain ? "the chain" : "all-gather") << "; sample: " << sample_batches
      << " batch(es)\n\n";

  // The search, in the configured mode: batch size, cache rows and L.
  const config::Mode mode = base.training.mode;
  const bool direct = trainer::IsDirectMode(mode);
  const int64_t b0 = base.training.batch_size;
  const int64_t c0 = base.training.cache_rows;
  std::vector<int64_t> batches = {b0 / 2, b0, b0 * 2};
  std::vector<int64_t> caches = direct ? std::vector<int64_t>{c0} : std::vector<int64_t>{c0, c0 * 2, c0 * 4};
  std::vector<int64_t> lookaheads = {base.training.lookahead};
  if (!direct && base.training.lookahead != 0) lookaheads.push_back(0);  // and the largest the cache allows
  struct Candidate {
    int64_t batch, cache, lookahead_asked;
    uint32_t lookahead = 0;
    planner::Prediction p;
  };
  std::optional<Candidate> best;
  out << "search (mode " << config::ModeName(mode) << "): batch, training.cache_rows, training.lookahead -> "
      << "predicted samples/s\n";
  out << "  " << std::string(8 - 5, ' ') << "batch  cache_rows     L    samples/s  ms/iter  dominant\n";
  for (int64_t b : batches) {
    if (b < work.trainers) continue;
    for (int64_t c : caches) {
      const double cache_bytes = static_cast<double>(c) * work.row_bytes;
      if (cache_bytes > hw.trainer_memory) {
        out << "  " << b << " " << c << ": the cache needs " << Fixed(cache_bytes / 1073741824.0, 2)
            << " GiB, more than trainer_memory_gib\n";
        continue;
      }
      for (int64_t l : lookaheads) {
        config::Config cfg = base;
        cfg.training.batch_size = b;
        cfg.training.cache_rows = c;
        cfg.training.lookahead = l;
        const auto sampled = Sample(cfg, sample_batches, nullptr, &why);
        char line[200];
        if (!sampled) {
          std::snprintf(line, sizeof line, "  %6lld %11lld %5lld    does not plan: %s\n", (long long)b, (long long)c,
                        (long long)l, why.substr(0, why.find('\n')).c_str());
          out << line;
          continue;
        }
        planner::Workload w = work;
        w.batch = static_cast<uint32_t>(b);
        const planner::Prediction p = planner::Predict(mode, w, sampled->rows, hw);
        std::snprintf(line, sizeof line, "  %6lld %11lld %5u %12.0f %8.2f  %s\n", (long long)b, (long long)c,
                      sampled->lookahead, p.samples_per_s(), p.iteration_s * 1e3, p.Dominant().c_str());
        out << line;
        if (!best || p.samples_per_s() > best->p.samples_per_s()) best = Candidate{b, c, l, sampled->lookahead, p};
      }
    }
  }
  if (!best) {
    err << "actorrec plan: no candidate fits the memory of " << hardware_path << " and plans\n";
    return kExitFailure;
  }
  out << "\nrecommended: training.batch_size = " << best->batch << ", training.cache_rows = " << best->cache
      << ", training.lookahead = " << best->lookahead_asked
      << (best->lookahead_asked == 0 ? " (the largest the cache allows: " + std::to_string(best->lookahead) + ")" : "")
      << "\n  predicted " << Fixed(best->p.samples_per_s(), 0) << " samples/s in " << config::ModeName(mode)
      << " (configured: batch " << b0 << ", cache_rows " << c0 << ", lookahead " << base.training.lookahead << ")\n"
      << "  dominated by " << best->p.Dominant() << "\n"
      << "  (a larger batch changes training, not only its speed: check the model's quality at that size)\n\n";

  // Every mode at a setting of batch size, cache rows and L.
  auto print_modes = [&](const std::string& title, int64_t batch, int64_t cache, int64_t lookahead) {
    out << "every mode " << title << " (per iteration, one trainer):\n";
    out << "  mode           compute ms  fetch ms  sync ms  iter ms   samples/s  critical KB  dominant\n";
    for (config::Mode m : planner::kModes) {
      config::Config cfg = base;
      cfg.training.mode = m;
      cfg.training.batch_size = batch;
      cfg.training.cache_rows = cache;
      cfg.training.lookahead = lookahead;
      char line[220];
      if (m == config::Mode::kIdeal && static_cast<double>(total_rows) * work.row_bytes > hw.trainer_memory) {
        std::snprintf(line, sizeof line, "  %-14s every row in every trainer needs %.2f GiB, more than trainer_memory_gib\n",
                      config::ModeName(m), static_cast<double>(total_rows) * work.row_bytes / 1073741824.0);
        out << line;
        continue;
      }
      const auto sampled = Sample(cfg, sample_batches, nullptr, &why);
      if (!sampled) {
        out << "  " << config::ModeName(m) << ": does not plan: " << why.substr(0, why.find('\n')) << "\n";
        continue;
      }
      planner::Workload w = work;
      w.batch = static_cast<uint32_t>(batch);
      const planner::Prediction p = planner::Predict(m, w, sampled->rows, hw);
      std::snprintf(line, sizeof line, "  %-14s %10.2f %9.2f %8.2f %8.2f %11.0f %12.1f  %s\n", config::ModeName(m),
                    p.compute_s * 1e3, p.exposed_fetch_s * 1e3, p.exposed_sync_s * 1e3, p.iteration_s * 1e3,
                    p.samples_per_s(), p.critical_bytes / 1e3, p.Dominant().c_str());
      out << line;
    }
  };
  print_modes("at the configured batch, cache_rows and lookahead", b0, c0, base.training.lookahead);
  if (best->batch != b0 || best->cache != c0 || best->lookahead_asked != base.training.lookahead) {
    print_modes("at the recommended choice", best->batch, best->cache, best->lookahead_asked);
  }
  const double shard_bytes = static_cast<double>(total_rows) * work.row_bytes / std::max<uint32_t>(work.shards, 1);
  if (shard_bytes > hw.shard_memory) {
    out << "warning: each shard holds " << Fixed(shard_bytes / 1073741824.0, 2)
        << " GiB of rows, more than shard_memory_gib: add shards\n";
  }
  out << "(the cost model: docs/planner.md)\n";
  return kExitOk;
}

}  // namespace actorrec
