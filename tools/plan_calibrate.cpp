// `actorrec plan --calibrate`: a profile fitted to measured runs.
#include "tools/plan_calibrate.hpp"

#include <cstdio>

#include "actors/common/exit_codes.hpp"
#include "base/atomic_file.hpp"
#include "planner/calibration.hpp"
#include "tools/plan_sample.hpp"

namespace actorrec {
namespace {

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  return buf;
}

}  // namespace

int RunCalibrate(const config::Config& cfg, const std::vector<std::string>& run_dirs, uint32_t warmup,
                 const std::string& hardware_path, const std::string& profile_out, std::ostream& out,
                 std::ostream& err) {
  auto hw = planner::LoadProfile(hardware_path);
  if (!hw.ok()) return err << "actorrec plan: " << hw.status().message() << "\n", kExitUsage;

  std::vector<planner::MeasuredRun> runs;
  for (const std::string& dir : run_dirs) {
    planner::MeasuredRun run;
    run.path = dir + "/metrics.jsonl";
    auto batches = planner::LoadBatchTimes(run.path);
    if (!batches.ok()) return err << "actorrec plan: " << batches.status().message() << "\n", kExitFailure;
    run.batches = std::move(batches).value();
    runs.push_back(std::move(run));
  }

  // One batch's plan: the schema and ids per sample the workload needs.
  PlanSample sample;
  sample.batches = 1;
  oracle::DumpReport report;
  if (Status s = MeasurePlans(cfg, &sample, &report); !s.ok()) {
    return err << "actorrec plan: " << s.message() << "\n", kExitFailure;
  }
  auto work = WorkloadOf(cfg, sample, *hw);
  if (!work.ok()) return err << "actorrec plan: " << work.status().message() << "\n", kExitFailure;

  auto c = planner::Calibrate(runs, warmup, *work, *hw);
  if (!c.ok()) return err << "actorrec plan: " << c.status().message() << "\n", kExitFailure;
  const planner::HardwareProfile fitted = planner::Calibrated(*hw, *c);

  char rate[200];
  std::snprintf(rate, sizeof rate, "%.2f GFLOP/s (the profile's one-thread rate: %.2f), spread %.3f",
                c->trainer_flops / 1e9, hw->gemm_flops / 1e9, c->spread);
  out << "calibrated on " << runs.size() << " run(s) of mode " << config::ModeName(cfg.training.mode) << ", "
      << c->batches << " batch(es) after a warmup of " << warmup << ":\n"
      << "  measured iteration " << Ms(c->iteration_s) << "; the model's critical sum " << Ms(c->sum_s)
      << "; the slowest trainer's work " << Ms(c->slowest_s) << ", the longest wait in the sum beyond it "
      << Ms(c->range_s) << "\n"
      << "  a trainer's mean compute " << Ms(c->mean_compute_s) << ": " << rate << "\n";

  std::string comment = "actorrec plan --calibrate: " + hw->name + " (" + hardware_path + ") fitted to";
  for (const std::string& dir : run_dirs) comment += " " + dir;
  const std::string text = planner::ProfileToToml(fitted, comment);
  if (profile_out == "-") {
    out << text;
    return kExitOk;
  }
  if (Status s = WriteFileAtomically(profile_out, text); !s.ok()) {
    return err << "actorrec plan: " << s.message() << "\n", kExitFailure;
  }
  out << "wrote " << profile_out << " (for plan --recommend --hardware " << profile_out << ")\n";
  return kExitOk;
}

}  // namespace actorrec
