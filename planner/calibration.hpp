// Calibration of the cost model from a measured run: what one mode's
// metrics.jsonl says of its trainers, turned into the profile keys
// trainer_gflops and trainer_spread (planner/hardware_profile.hpp), so that
// the model's compute term is the rate trainers reach where they run
// (sharing cores with the sampler, the oracle and the shards) and its sync
// term holds the wait for the slowest trainer. docs/planner.md states the
// equations and how they were validated (calibrated on one mode, predicting
// the others).
//
// The batch lines record, per phase, the largest time among the trainers
// (actors/common/step_report.hpp), so per batch b of a run with W trainers:
//   T_b      = elapsed_b − elapsed_(b−1)            (one iteration)
//   A_b      = AllReduceSeconds(dense + critical_b rows)   (the model's sum)
//   range_b  = max(0, sync_b − exposed_delayed_b − A_b)   (the trainer that
//              waited longest in the sum waited for the slowest to arrive)
//   slowest_b = T_b − A_b − fetch_b − exposed_delayed_b  (the slowest
//              trainer's own work: compute, pooling, applying updates)
// Over the batches after the warmup: with the trainers' per-batch compute
// normal (mean C, deviation σ), E[range] = 2 σ E_W and E[slowest] = C + σ E_W
// (E_W = ExpectedMaxOfNormals(W)), so
//   C = slowest − range / 2,  spread = σ / C = range / (2 E_W C),
// and trainer_flops solves C = slice·F / trainer_flops + the model's memory
// term. With these keys Predict gives back the calibrating mode's mean
// iteration (up to what its fetch wait adds).
//
// Plain values and text in, values out (LoadBatchTimes reads a file).
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "planner/cost_model.hpp"
#include "planner/hardware_profile.hpp"

namespace actorrec::planner {

// What calibration reads of one batch line.
struct BatchTimes {
  double elapsed_s = 0;          // since training started, when the batch settled
  double fetch_s = 0;            // the slowest trainer's wait for rows
  double dense_sync_s = 0;       // the longest dense + critical sync among the trainers
  double exposed_delayed_s = 0;  // the longest part of it behind the previous delayed sync (0 if absent)
  double critical_rows = 0;      // rows in the critical sum
};

// The batch lines of a metrics.jsonl's last attempt (an "attempt" line
// starts a new one). InvalidArgument "path:line: …" for a line that is not
// a metrics event or a batch line without elapsed_s, fetch_s, dense_sync_s
// or critical_rows; lines of other events are skipped.
Result<std::vector<BatchTimes>> ParseBatchTimes(const std::string& text, const std::string& path);
// Reads and parses a file; NotFound / IoError name it.
Result<std::vector<BatchTimes>> LoadBatchTimes(const std::string& path);

// One measured run: its file (for errors) and its batches.
struct MeasuredRun {
  std::string path;
  std::vector<BatchTimes> batches;
};

struct Calibration {
  double trainer_flops = 0;   // the profile's trainer_gflops × 1e9
  double spread = 0;          // the profile's trainer_spread
  double mean_compute_s = 0;  // C: the mean trainer's work per batch
  double slowest_s = 0;       // the slowest trainer's work per batch (mean over batches)
  double range_s = 0;         // the wait of the trainer that waited longest (mean over batches)
  double sum_s = 0;           // the model's critical sum (mean over batches)
  double iteration_s = 0;     // the measured iteration (mean over batches)
  uint64_t batches = 0;       // batches used, all runs together
};

// Calibrates from runs of one config (`work`, on the links of `hw`),
// skipping each run's first `warmup` batches (at least 1: a batch's
// iteration needs the one before). InvalidArgument naming the file where a
// run has no batch after the warmup, or where the work left for compute is
// not more than the model's memory term.
Result<Calibration> Calibrate(const std::vector<MeasuredRun>& runs, uint32_t warmup, const Workload& work,
                              const HardwareProfile& hw);

// `hw` with the calibration's keys set.
HardwareProfile Calibrated(const HardwareProfile& hw, const Calibration& c);

}  // namespace actorrec::planner
