// `actorrec train`: runs a config's training to the end with a progress
// line, periodic and final evaluation, a metrics file and a summary.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "actors/run/pipeline_host.hpp"
#include "configs/config.hpp"

namespace actorrec {

struct TrainOptions {
  // Run the planned modes in the lockstep driver (one thread moves the data
  // between the roles' cores) instead of the actor pipeline.
  bool lockstep = false;
  // Where checkpoints go (actors/run/checkpoint.hpp); empty: none. One
  // every `checkpoint_every` batches (0: only at the end) and one at the end.
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;
  // A checkpoint directory to continue from; empty: a fresh run.
  std::string resume_dir;
  // Set on a coordinator that its agent restarted after a failure
  // (actors/node/agent.hpp): metrics.jsonl is continued, not emptied, and
  // gets a "recovery" line saying from which snapshot and how many batches
  // are replayed.
  bool recovering = false;
  // Where the inspector serves (HOST:PORT or "off"); empty: run.inspect_address.
  std::string inspect_address;
  // Measure the GEMM roofline before the run starts, for the inspector
  // (--roofline: about 10 s for the default config on a 2-core VM).
  bool roofline = false;
  // Set by `actorrec node` on the cluster's coordinator: the run spans the
  // members' processes (PipelineRun::CreateCoordinator) instead of this one.
  const trainer::ClusterSeat* cluster = nullptr;
  // Called with the exit code and the stop signal (0: none) after the
  // summary, before the run's actors stop: the coordinator ends the
  // cluster's control plane there.
  std::function<void(int code, int signal)> before_teardown;
};

// Trains `cfg`; returns the process exit code (actors/common/exit_codes.hpp).
// Progress goes to `err` (a status line), results to `out`. SIGINT or
// SIGTERM stops after the current batch, with the summary of what ran.
int TrainConfig(const config::Config& cfg, const TrainOptions& options, std::ostream& out, std::ostream& err);

}  // namespace actorrec
