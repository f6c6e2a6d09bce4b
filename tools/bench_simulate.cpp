// The simulation benchmark.
#include "tools/bench_simulate.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "actors/common/exit_codes.hpp"
#include "configs/config.hpp"
#include "configs/memory_check.hpp"
#include "planner/cost_model.hpp"
#include "planner/simulator.hpp"
#include "tools/bench_report.hpp"
#include "tools/plan_sample.hpp"

namespace actorrec {
namespace {

// Bagpipe's testbed as the paper describes it (8 p3.2xlarge trainers, one
// V100 each, 10 Gbit/s). The GEMM rate is an assumption: 10 TFLOP/s, about
// two thirds of a V100's fp32 peak (the paper's per-model GPU times were not
// at hand); PCIe 3 x16 for host <-> device.
constexpr const char* kBagpipeProfile = R"toml([hardware]
name = "Bagpipe-like: V100 trainers, 10 Gbit/s (assumed rates)"
gemm_gflops = 10000
memory_gbps = 700
network_gbit = 10
network_latency_us = 50
host_device_gbps = 12
trainer_memory_gib = 16
shard_memory_gib = 61
)toml";

constexpr int kBatch = 16384;

// The Bagpipe setting as a config: DLRM in the shape of Bagpipe's own
// launch commands (bottom MLP 13-1024-1024-512-256-64-48, top MLP
// 1024-512-256-1, embeddings of 48) on generated data with the full
// Criteo Kaggle cardinalities, W trainers and W shards.
std::string ConfigText(config::Mode mode, int trainers, uint64_t samples, const std::string& collective) {
  std::ostringstream t;
  t << "[run]\nname = \"simulate\"\nseed = 1\n"
       "[model]\nkind = \"dlrm\"\nembedding_dim = 48\nbottom_mlp = [1024, 1024, 512, 256, 64, 48]\n"
       "top_mlp = [1024, 512, 256, 1]\n"
       "[optimizer]\ndense = \"sgd\"\ndense_lr = 0.1\nsparse = \"sgd\"\nsparse_lr = 0.1\n"
       "[dataset]\nsource = \"generated\"\npreset = \"criteo-kaggle\"\nsamples = "
    << samples << "\neval_samples = 0\nrow_scale = 1.0\n[training]\nmode = \"" << config::ModeName(mode)
    << "\"\nbatch_size = " << kBatch
    << "\nlookahead = 200\ncache_rows = 4194304\n"
       "[cluster]\nsecret = \"simulate-secret-00000\"\ncollective = \""
    << collective << "\"\n";
  // One host per trainer rank, each with a shard; the first also samples
  // and plans.
  for (int h = 0; h < trainers; ++h) {
    t << "[[cluster.member]]\nname = \"h" << h << "\"\naddress = \"10.0.0." << h + 1 << "\"\nport = 7700\nroles = "
      << (h == 0 ? "[\"all\"]" : "[\"trainer\", \"embedding\"]") << "\ntrainers = 1\nembedding_shards = 1\n";
  }
  return t.str();
}

struct ModeRun {
  std::string name;
  planner::SimResult sim;
  planner::Prediction predicted;
  planner::PlanRows rows;  // per batch, all trainers
};

// The reference of the Bagpipe paper's "ideal": the same batches with no
// embedding traffic at all (every row resident, nothing fetched, nothing
// synced but the dense gradients): compute and the dense sum alone.
ModeRun Reference(const std::vector<planner::BatchTrace>& trace, const planner::Workload& work,
                  const planner::HardwareProfile& hw, double compute_s) {
  std::vector<planner::BatchTrace> none;
  for (const planner::BatchTrace& t : trace) {
    planner::BatchTrace z;
    z.fetch.assign(t.fetch.size(), 0);
    z.write_back.assign(t.write_back.size(), 0);
    z.ahead = true;
    none.push_back(std::move(z));
  }
  planner::SimOptions options;
  options.compute_s = compute_s;
  return {"paper_ideal", planner::Simulate(none, work, hw, options),
          planner::Predict(config::Mode::kIdeal, work, planner::PlanRows{}, hw), planner::PlanRows{}};
}

}  // namespace

int RunSimulate(const SimulateFlags& flags, const std::filesystem::path& dir, std::vector<std::string>* written) {
  auto hw = flags.hardware.empty() ? planner::ParseProfile(kBagpipeProfile, "<built-in Bagpipe-like profile>")
                                   : planner::LoadProfile(flags.hardware);
  if (!hw.ok()) {
    std::cerr << "actorrec bench: " << hw.status().message() << "\n";
    return kExitUsage;
  }
  const std::string csv_path = (dir / "simulate.csv").string();
  std::ofstream csv(csv_path, std::ios::trunc);
  csv << "trainers,mode,simulated_ms,predicted_ms,compute_ms,fetch_wait_ms,sync_wait_ms,of_paper_ideal,of_ideal,"
         "vs_no_cache,fetched_rows,critical_rows,delayed_rows\n";
  std::vector<std::pair<std::string, double>> bars;
  std::printf("\ncluster simulation: %s; DLRM as in Bagpipe's launch commands, global batch %d, Criteo Kaggle "
              "cardinalities (generated), L = 200, %llu plans per mode; W trainers, W shards on their own hosts; "
              "cluster.collective = %s\n",
              hw->name.c_str(), kBatch, static_cast<unsigned long long>(flags.batches), flags.collective.c_str());
  std::printf("%4s %-17s %10s %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "W", "mode", "sim ms", "model ms", "compute",
              "wait in", "sync w", "of paper", "of ideal", "vs no_c", "fetched", "critical", "delayed");
  for (int w : flags.trainers) {
    std::vector<ModeRun> runs;
    planner::Workload ideal_work;
    std::vector<planner::BatchTrace> ideal_trace;
    for (config::Mode mode : {config::Mode::kIdeal, config::Mode::kNoCache, config::Mode::kReplicated,
                              config::Mode::kLrpp, config::Mode::kLrppDelayed}) {
      // A simulated host's memory, not this machine's (only the plans are
      // made here).
      const config::MemoryBudget cluster{static_cast<uint64_t>(hw->trainer_memory + hw->shard_memory),
                                         "a simulated host's memory (hardware profile)"};
      const config::Config cfg = config::ParseConfig(
          ConfigText(mode, w, (flags.batches + 260) * kBatch, flags.collective), "<bench simulate>", cluster);
      std::vector<planner::BatchTrace> trace;
      PlanSample sample;
      sample.batches = flags.batches;
      sample.on_plan = [&](const oracle::BatchPlan& plan) { trace.push_back(planner::TraceOf(plan)); };
      struct : std::streambuf {
        int overflow(int c) override { return c; }
      } nothing;
      std::ostream sink(&nothing);
      oracle::DumpReport report;
      if (Status s = PlanConfig(cfg, &sample, &sink, &report); !s.ok()) {
        std::cerr << "actorrec bench simulate: W " << w << ", " << config::ModeName(mode) << ": " << s.message()
                  << "\n";
        return kExitFailure;
      }
      auto workload = WorkloadOf(cfg, sample, *hw);
      if (!workload.ok()) {
        std::cerr << "actorrec bench simulate: " << workload.status().message() << "\n";
        return kExitFailure;
      }
      planner::Workload work = *workload;
      const planner::PlanRows plan_rows = RowsOf(report.stats);
      const planner::Prediction predicted = planner::Predict(mode, work, plan_rows, *hw);
      planner::SimOptions options;
      options.compute_s = predicted.compute_s;
      if (mode == config::Mode::kIdeal) ideal_work = work, ideal_trace = trace;
      runs.push_back({config::ModeName(mode), planner::Simulate(trace, work, *hw, options), predicted, plan_rows});
      if (mode == config::Mode::kLrppDelayed) {
        // As the sync_scheduler runs it today: the delayed sync in arrival
        // order, the next critical sync behind it.
        options.delayed_yields = false;
        runs.push_back({"lrpp_delayed_fifo", planner::Simulate(trace, work, *hw, options), predicted, plan_rows});
      }
    }
    runs.insert(runs.begin(), Reference(ideal_trace, ideal_work, *hw, runs[0].predicted.compute_s));
    const double paper = runs[0].sim.iteration_s, ideal = runs[1].sim.iteration_s, no_cache = runs[2].sim.iteration_s;
    for (const ModeRun& r : runs) {
      const double ms = r.sim.iteration_s * 1e3;
      std::printf("%4d %-17s %10.3f %10.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8.2fx %9.0f %9.0f %9.0f\n", w, r.name.c_str(),
                  ms, r.predicted.iteration_s * 1e3, r.sim.compute_s * 1e3, r.sim.fetch_wait_s * 1e3,
                  r.sim.sync_wait_s * 1e3, paper / r.sim.iteration_s, ideal / r.sim.iteration_s,
                  no_cache / r.sim.iteration_s, r.rows.fetched, r.rows.critical, r.rows.delayed);
      char line[320];
      std::snprintf(line, sizeof line, "%d,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", w,
                    r.name.c_str(), ms, r.predicted.iteration_s * 1e3, r.sim.compute_s * 1e3,
                    r.sim.fetch_wait_s * 1e3, r.sim.sync_wait_s * 1e3, paper / r.sim.iteration_s,
                    ideal / r.sim.iteration_s, no_cache / r.sim.iteration_s, r.rows.fetched, r.rows.critical,
                    r.rows.delayed);
      csv << line;
      bars.push_back({"W=" + std::to_string(w) + " " + r.name, ms});
    }
    std::fflush(stdout);
  }
  csv.close();
  if (!csv) {
    std::cerr << "actorrec bench: writing " << csv_path << " failed\n";
    return kExitFailure;
  }
  written->push_back(csv_path);
  const std::string svg_path = (dir / "simulate.svg").string();
  std::ofstream svg(svg_path, std::ios::trunc);
  svg << BarChartSvg("simulated iteration time, " + hw->name, "ms per iteration", bars);
  if (!svg) {
    std::cerr << "actorrec bench: writing " << svg_path << " failed\n";
    return kExitFailure;
  }
  written->push_back(svg_path);
  std::printf("(sim: the simulator replaying the plans; model: the cost model on the same plans' rows per batch; "
              "paper_ideal: the Bagpipe paper's ideal, no embedding traffic at all (compute + the dense sum); "
              "ideal: actorrec's mode, every row resident and every updated row synced; lrpp_delayed: the delayed sync yields "
              "to the next critical sync; lrpp_delayed_fifo: in arrival order, as the sync scheduler runs it today; "
              "of paper / of ideal: "
              "their time / the mode's; vs no_c: no_cache's time / the mode's; wait in: before compute, for rows or for "
              "the delayed sync of b - 2; rows per batch, all trainers)\n");
  return kExitOk;
}

}  // namespace actorrec
