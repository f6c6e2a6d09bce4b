// The oracle's plans of a config's first batches, as `actorrec plan` writes
// them and `actorrec plan --recommend` measures them: the planner the
// config's mode uses (lookahead or direct), fed by the config's dataset.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>

#include "actors/oracle/plan_dump.hpp"
#include "base/status.hpp"
#include "configs/config.hpp"
#include "data/sample_block.hpp"
#include "planner/cost_model.hpp"

namespace actorrec {

struct PlanSample {
  uint64_t batches = 10;
  std::optional<uint32_t> trainer;  // only this trainer's lines; all when empty
  std::function<void(const oracle::BatchPlan&)> on_plan;  // every plan, in order (may be empty)
  // Filled: the dataset's schema, and the ids read per sample (all tables).
  data::DatasetSchema schema;
  double ids_per_sample = 0;
  uint32_t trainers = 0;
};

// Plans sample->batches batches of cfg's training data into *out (JSON
// lines; a stream whose writes go nowhere to measure only) and *report.
// InvalidArgument for a bad config or data shape, report->capacity_error
// when the cache is too small for L, else the reader's error.
Status PlanConfig(const config::Config& cfg, PlanSample* sample, std::ostream* out, oracle::DumpReport* report);

// PlanConfig into a stream whose writes go nowhere: the plans measured
// (`report`, `sample`'s schema and ids per sample), not kept.
Status MeasurePlans(const config::Config& cfg, PlanSample* sample, oracle::DumpReport* report);

// The cost model's view of a run on `hw`: the config's cluster (W trainers,
// S shards on the members that host them), batch, its model's dense FLOPs
// per sample and parameter bytes (the model built on the CPU backend), the
// row sizes of its sparse optimizer, the ids per sample a PlanConfig read,
// the collective of `cluster.collective` on hw, and the share of a core each
// trainer gets: members at one address share a host's hw.host_cores, every
// member does when `one_host` (the network testbed: every emulated host on
// this machine); the busiest host with trainers sets it.
Result<planner::Workload> WorkloadOf(const config::Config& cfg, const PlanSample& sample,
                                     const planner::HardwareProfile& hw, bool one_host = false);

// Rows per batch of the plans a PlanConfig made.
planner::PlanRows RowsOf(const oracle::PlanStats& stats);

}  // namespace actorrec
