// Calibrating the cost model from a run's metrics.jsonl (docs/planner.md).
#include "planner/calibration.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/json_number.hpp"

namespace actorrec::planner {

Result<std::vector<BatchTimes>> ParseBatchTimes(const std::string& text, const std::string& path) {
  std::vector<BatchTimes> batches;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  const std::string event = "{\"event\":\"";
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (line.rfind(event, 0) != 0 || line.back() != '}') {
      return Status::InvalidArgument(where + "not a metrics event: " + line.substr(0, 80));
    }
    if (line.rfind(event + "attempt\"", 0) == 0) {
      batches.clear();  // a resumed run: the last attempt's batches
      continue;
    }
    if (line.rfind(event + "batch\"", 0) != 0) continue;
    BatchTimes b;
    struct Key {
      const char* name;
      double* out;
      bool required;
    };
    const Key keys[] = {{"elapsed_s", &b.elapsed_s, true},
                        {"fetch_s", &b.fetch_s, true},
                        {"dense_sync_s", &b.dense_sync_s, true},
                        {"exposed_delayed_s", &b.exposed_delayed_s, false},
                        {"critical_rows", &b.critical_rows, true}};
    for (const Key& k : keys) {
      const auto v = NumberField(line, k.name);
      if (v && *v >= 0) {
        *k.out = *v;
      } else if (v || k.required) {
        return Status::InvalidArgument(where + "the batch line's \"" + k.name + "\" is " +
                                       (v ? "negative" : "missing or not a number"));
      }
    }
    batches.push_back(b);
  }
  return batches;
}

Result<std::vector<BatchTimes>> LoadBatchTimes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the run's metrics");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": reading the run's metrics failed");
  return ParseBatchTimes(text.str(), path);
}

Result<Calibration> Calibrate(const std::vector<MeasuredRun>& runs, uint32_t warmup, const Workload& work,
                              const HardwareProfile& hw) {
  if (runs.empty()) return Status::InvalidArgument("no run to calibrate from");
  const size_t first = std::max<uint32_t>(warmup, 1);
  Calibration c;
  for (const MeasuredRun& run : runs) {
    if (run.batches.size() <= first) {
      return Status::InvalidArgument(run.path + ": " + std::to_string(run.batches.size()) +
                                     " batch(es), none after the warmup of " + std::to_string(first) +
                                     " (a batch's iteration needs the batch before it)");
    }
    for (size_t b = first; b < run.batches.size(); ++b) {
      const BatchTimes& t = run.batches[b];
      const double iteration = t.elapsed_s - run.batches[b - 1].elapsed_s;
      const double sum = AllReduceSeconds(work.dense_bytes + t.critical_rows * work.sync_row_bytes, work.trainers,
                                          work.collective, hw);
      c.iteration_s += iteration;
      c.sum_s += sum;
      c.range_s += std::max(0.0, t.dense_sync_s - t.exposed_delayed_s - sum);
      c.slowest_s += iteration - sum - t.fetch_s - t.exposed_delayed_s;
      ++c.batches;
    }
  }
  const double n = static_cast<double>(c.batches);
  c.iteration_s /= n;
  c.sum_s /= n;
  c.range_s /= n;
  c.slowest_s /= n;
  const double e_w = ExpectedMaxOfNormals(work.trainers);
  if (e_w <= 0) c.range_s = 0;  // one trainer waits for no one
  c.mean_compute_s = c.slowest_s - c.range_s / 2;
  const double slice = work.batch / static_cast<double>(std::max<uint32_t>(work.trainers, 1));
  const double memory_s = 3 * slice * work.lookups_per_sample * work.embedding_bytes / hw.memory_bw;
  const double gemm_s = c.mean_compute_s - memory_s;
  if (gemm_s <= 0 || work.flops_per_sample <= 0) {
    return Status::InvalidArgument(runs.front().path + ": the trainers' measured work per batch (" +
                                   std::to_string(c.mean_compute_s * 1e3) +
                                   " ms, after the model's sum) leaves no time for GEMMs beyond the memory term (" +
                                   std::to_string(memory_s * 1e3) + " ms): the run does not fit this profile's links");
  }
  c.trainer_flops = slice * work.flops_per_sample / gemm_s;
  c.spread = e_w > 0 ? c.range_s / (2 * e_w * c.mean_compute_s) : 0.0;
  return c;
}

HardwareProfile Calibrated(const HardwareProfile& hw, const Calibration& c) {
  HardwareProfile out = hw;
  out.trainer_flops = c.trainer_flops;
  out.trainer_spread = c.spread;
  return out;
}

}  // namespace actorrec::planner
