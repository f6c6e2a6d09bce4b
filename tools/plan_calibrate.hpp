// `actorrec plan --calibrate RUN_DIR … --hardware FILE`: reads measured runs
// of one config (each RUN_DIR's metrics.jsonl; the config is the first
// RUN_DIR's cluster.toml unless --config names one), derives the trainers'
// effective GEMM rate and the spread of their per-batch compute
// (planner/calibration.hpp), and writes the profile with trainer_gflops and
// trainer_spread set, for `actorrec plan --recommend` to predict other modes.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "configs/config.hpp"

namespace actorrec {

// Returns the exit code: 0, 1 (a run's metrics, planning), 2 (the profile).
// `profile_out`: the file to write, "-" for `out` only.
int RunCalibrate(const config::Config& cfg, const std::vector<std::string>& run_dirs, uint32_t warmup,
                 const std::string& hardware_path, const std::string& profile_out, std::ostream& out,
                 std::ostream& err);

}  // namespace actorrec
