// DumpPlans: the plans of a run's first batches as JSON lines, the body of
// `actorrec oracle dump` (format: plan_json.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "actors/oracle/planner_options.hpp"
#include "base/status.hpp"
#include "data/sample_block.hpp"

namespace actorrec::oracle {

// The global batches in epoch order: fills *batch and returns true, or
// returns false after the last one.
using BatchSource = std::function<Result<bool>(data::SampleBlock* batch)>;

// Plans the first `batches` batches of `source` and writes one line per
// batch and trainer (batch-major, trainers in order) to *out. Reads up to
// batches + L batches, since each plan looks L ahead (more while an automatic
// L probes). *lookahead_report, if given, receives how L was chosen. A
// source, input or capacity error stops the dump with that Status.
Status DumpPlans(const PlannerOptions& options, const BatchSource& source, uint64_t batches, std::ostream* out,
                 std::string* lookahead_report = nullptr);

}  // namespace actorrec::oracle
