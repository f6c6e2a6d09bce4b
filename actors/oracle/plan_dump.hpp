// DumpPlans: the plans of a run's first batches as JSON lines, the body of
// `actorrec plan` (format: plan_json.hpp and docs/plan_format.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "actors/oracle/direct_planner.hpp"
#include "actors/oracle/plan_stats.hpp"
#include "actors/oracle/planner_options.hpp"
#include "base/status.hpp"
#include "data/sample_block.hpp"

namespace actorrec::oracle {

// The global batches in epoch order: fills *batch and returns true, or
// returns false after the last one.
using BatchSource = std::function<Result<bool>(data::SampleBlock* batch)>;

struct DumpOptions {
  uint64_t batches = 0;                 // plan this many batches (fewer when the data ends first)
  std::optional<uint32_t> trainer;      // write only this trainer's lines; all when empty
  uint64_t bytes_per_row = 0;           // for the byte figures of the stats
  // Set for the modes without lookahead (ideal, static_hot, no_cache): their
  // plans come from a DirectPlanner, as in the oracle actor; the
  // PlannerOptions still give the trainers.
  std::optional<DirectOptions> direct;
  // Called with every plan, in batch order, before its lines are written
  // (the cluster simulator replays them); may be empty.
  std::function<void(const BatchPlan&)> on_plan;
};

// What a dump did, filled as far as it got, also when it fails.
struct DumpReport {
  std::string lookahead_report;  // how L was chosen (Planner::lookahead_report)
  uint32_t lookahead = 0;
  uint64_t batches = 0;          // batches planned and written
  PlanStats stats;
  // The failure came from the planner: the cache is too small for the data
  // at this L (the message names the capacity needed). Otherwise it came
  // from the source or the batches' shape.
  bool capacity_error = false;
};

// Plans the first options.batches batches of `source` and writes one line
// per batch and trainer (batch-major, trainers in order) to *out. Reads up to
// batches + L batches, since each plan looks L ahead (more while an automatic
// L probes). A source, input or capacity error stops the dump with that
// Status; the lines written until then stay written.
Status DumpPlans(const PlannerOptions& options, const BatchSource& source, const DumpOptions& dump,
                 std::ostream* out, DumpReport* report);

// The historical form: every trainer, no report but how L was chosen.
Status DumpPlans(const PlannerOptions& options, const BatchSource& source, uint64_t batches, std::ostream* out,
                 std::string* lookahead_report = nullptr);

}  // namespace actorrec::oracle
