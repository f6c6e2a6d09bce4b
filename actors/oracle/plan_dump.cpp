// The plan dump: source -> BatchRowsBuilder -> Planner -> JSON lines.
#include "actors/oracle/plan_dump.hpp"

#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/plan_json.hpp"
#include "actors/oracle/planner.hpp"

namespace actorrec::oracle {

Status DumpPlans(const PlannerOptions& options, const BatchSource& source, uint64_t batches, std::ostream* out,
                 std::string* lookahead_report) {
  if (Status s = Validate(options); !s.ok()) return s;
  Planner planner(options);
  BatchRowsBuilder builder(options.table_rows);
  data::SampleBlock batch;
  BatchPlan plan;
  uint64_t written = 0;
  auto write_ready = [&]() -> Status {
    while (written < batches && planner.Ready()) {
      if (Status s = planner.PlanNext(&plan); !s.ok()) return s;
      for (uint32_t w = 0; w < options.trainers; ++w) *out << PlanToJson(plan.ForTrainer(w)) << '\n';
      ++written;
    }
    return Status::Ok();
  };
  while (written < batches) {
    if (!planner.CanPush()) {
      if (Status s = write_ready(); !s.ok()) return s;
      continue;
    }
    Result<bool> more = source(&batch);
    if (!more.ok()) return more.status();
    if (!*more) break;
    BatchRows rows;
    if (Status s = builder.Build(batch, options.trainers, &rows); !s.ok()) return s;
    if (Status s = planner.Push(std::move(rows)); !s.ok()) return s;
  }
  if (written < batches) {
    if (Status s = planner.Finish(); !s.ok()) return s;
    if (Status s = write_ready(); !s.ok()) return s;
  }
  if (lookahead_report) *lookahead_report = planner.lookahead_report();
  return out->good() ? Status::Ok() : Status::IoError("writing the plan dump failed");
}

}  // namespace actorrec::oracle
