// The plan dump: source -> BatchRowsBuilder -> Planner (or DirectPlanner) -> JSON lines.
#include "actors/oracle/plan_dump.hpp"

#include <memory>
#include <string>

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/plan_json.hpp"
#include "actors/oracle/planner.hpp"

namespace actorrec::oracle {

Status DumpPlans(const PlannerOptions& options, const BatchSource& source, const DumpOptions& dump,
                 std::ostream* out, DumpReport* report) {
  *report = DumpReport();
  report->stats = PlanStats(dump.bytes_per_row, dump.direct.has_value());
  if (Status s = Validate(options); !s.ok()) return s;
  if (dump.trainer && *dump.trainer >= options.trainers) {
    return Status::InvalidArgument("trainer " + std::to_string(*dump.trainer) + " does not exist: the run has " +
                                   std::to_string(options.trainers) + " trainer(s), 0 … " +
                                   std::to_string(options.trainers - 1));
  }
  if (dump.direct) {
    if (Status s = Validate(*dump.direct); !s.ok()) return s;
  }
  std::unique_ptr<PlanMaker> maker = MakePlanMaker(options, dump.direct ? &*dump.direct : nullptr);
  PlanMaker& planner = *maker;
  BatchRowsBuilder builder(options.table_rows);
  data::SampleBlock batch;
  BatchPlan plan;
  // Planner errors are all about capacity: shapes and row ids were checked
  // by the builder before the planner saw the batch.
  auto planner_failed = [&](Status s) {
    report->capacity_error = true;
    return s;
  };
  auto write_ready = [&]() -> Status {
    while (report->batches < dump.batches && planner.Ready()) {
      if (Status s = planner.PlanNext(&plan); !s.ok()) return planner_failed(s);
      report->stats.Add(plan);
      if (dump.on_plan) dump.on_plan(plan);
      for (uint32_t w = 0; w < options.trainers; ++w) {
        if (!dump.trainer || *dump.trainer == w) *out << PlanToJson(plan.ForTrainer(w)) << '\n';
      }
      ++report->batches;
    }
    return Status::Ok();
  };
  auto finish = [&](Status s) {
    report->lookahead = planner.lookahead();
    report->lookahead_report = planner.lookahead_report();
    if (s.ok() && !out->good()) return Status::IoError("writing the plan dump failed");
    return s;
  };
  uint64_t read = 0;
  while (report->batches < dump.batches) {
    if (!planner.CanPush()) {
      if (Status s = write_ready(); !s.ok()) return finish(s);
      continue;
    }
    Result<bool> more = source(&batch);
    if (!more.ok()) return finish(more.status());
    if (!*more) break;
    BatchRows rows = planner.RecycledRows();
    if (Status s = builder.Build(batch, options.trainers, &rows); !s.ok()) {
      return finish(Status::InvalidArgument("batch " + std::to_string(options.first_batch + read) + ": " +
                                            s.message()));
    }
    ++read;
    if (Status s = planner.Push(std::move(rows)); !s.ok()) return finish(planner_failed(s));
  }
  if (report->batches < dump.batches) {
    if (Status s = planner.Finish(); !s.ok()) return finish(planner_failed(s));
    if (Status s = write_ready(); !s.ok()) return finish(s);
  }
  return finish(Status::Ok());
}

Status DumpPlans(const PlannerOptions& options, const BatchSource& source, uint64_t batches, std::ostream* out,
                 std::string* lookahead_report) {
  DumpOptions dump;
  dump.batches = batches;
  DumpReport report;
  Status s = DumpPlans(options, source, dump, out, &report);
  if (lookahead_report) *lookahead_report = report.lookahead_report;
  return s;
}

}  // namespace actorrec::oracle
