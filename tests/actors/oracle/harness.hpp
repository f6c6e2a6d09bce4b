// Runs the planner over a test workload and shapes the executor's options.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/planner.hpp"
#include "tests/actors/oracle/executor.hpp"
#include "tests/actors/oracle/workload.hpp"

namespace actorrec::oracle::testing {

using Plans = std::vector<std::vector<TrainerPlan>>;  // [batch][trainer]

// Every batch of `w`, planned by `planner` for `trainers`; or the first
// error. `batch_plans`, if given, receives the BatchPlans themselves.
inline Result<Plans> PlanAllWith(PlanMaker& planner, uint32_t trainers, const Workload& w,
                                 std::string* report = nullptr, std::vector<BatchPlan>* batch_plans = nullptr) {
  BatchRowsBuilder builder(w.table_rows);
  Plans out;
  BatchPlan plan;
  auto drain = [&](bool all) -> Status {
    while (planner.Ready() && (all || !planner.CanPush())) {
      if (Status s = planner.PlanNext(&plan); !s.ok()) return s;
      out.emplace_back();
      for (uint32_t t = 0; t < trainers; ++t) out.back().push_back(plan.ForTrainer(t));
      if (batch_plans) batch_plans->push_back(plan);
    }
    return Status::Ok();
  };
  for (const data::SampleBlock& batch : w.batches) {
    if (Status s = drain(false); !s.ok()) return s;
    BatchRows rows;
    if (Status s = builder.Build(batch, trainers, &rows); !s.ok()) return s;
    if (Status s = planner.Push(std::move(rows)); !s.ok()) return s;
  }
  if (Status s = planner.Finish(); !s.ok()) return s;
  if (Status s = drain(true); !s.ok()) return s;
  if (!planner.Done()) return Status::InvalidArgument("planner not done after the last batch");
  if (report) *report = planner.lookahead_report();
  return out;
}

// The lookahead planner's plans of `w`.
inline Result<Plans> PlanAll(const PlannerOptions& options, const Workload& w, std::string* report = nullptr,
                             std::vector<BatchPlan>* batch_plans = nullptr) {
  Planner planner(options);
  return PlanAllWith(planner, options.trainers, w, report, batch_plans);
}

inline std::deque<BatchRows> AllRows(const PlannerOptions& options, const Workload& w) {
  BatchRowsBuilder builder(w.table_rows);
  std::deque<BatchRows> out;
  for (const data::SampleBlock& batch : w.batches) {
    out.emplace_back();
    Status s = builder.Build(batch, options.trainers, &out.back());
    ACTORREC_ASSERT(s.ok(), s.message());
  }
  return out;
}

inline ExecutorOptions ExecutorFor(const PlannerOptions& options, uint32_t lookahead, bool lazy) {
  ExecutorOptions e;
  e.trainers = options.trainers;
  e.lookahead = lookahead;
  e.lazy = lazy;
  e.private_rows = options.private_rows;
  e.delayed_sync = options.delayed_sync;
  e.table_slots.resize(options.table_rows.size());
  uint32_t first = 0;
  for (const Partition& p : options.partitions) {
    for (uint32_t t : p.tables) e.table_slots[t] = {first, first + p.capacity};
    first += p.capacity;
  }
  e.capacity = first;
  return e;
}

// "" when the executor finds nothing, else its findings, one per line.
inline std::string Violations(const ExecutorOptions& e, const Workload& w, const Plans& plans) {
  std::string out;
  for (const std::string& v : Execute(e, w.batches, plans)) out += v + "\n";
  return out;
}

// Violations of plans whose lookahead varies from batch to batch (windows
// that end early: each plan checked against its own window), eager and lazy.
inline std::string WindowViolations(const PlannerOptions& options, const Workload& w, const Plans& plans) {
  std::string out;
  for (const bool lazy : {false, true}) {
    ExecutorOptions e = ExecutorFor(options, 0, lazy);
    e.varying_lookahead = true;
    out += Violations(e, w, plans);
  }
  return out;
}

}  // namespace actorrec::oracle::testing
