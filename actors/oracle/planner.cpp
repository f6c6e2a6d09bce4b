// Planner: input checks, the auto-L probe's buffering, and the window of
// BatchRows whose features move into the plans.
#include "actors/oracle/planner.hpp"

#include <string>
#include <utility>

#include "actors/oracle/auto_lookahead.hpp"

namespace actorrec::oracle {

Planner::Planner(PlannerOptions options) : options_(std::move(options)), owned_(OwnedPartitions(options_)) {
  const Status s = Validate(options_);
  ACTORREC_ASSERT(s.ok(), s.message());
  if (options_.lookahead != 0) {
    core_ = std::make_unique<LookaheadCore>(options_, owned_, options_.lookahead, /*bounded=*/true);
    report_ = "lookahead " + std::to_string(options_.lookahead) + " (given)";
  }
}

bool Planner::CanPush() const {
  if (finished_) return false;
  if (!core_) return true;
  return probe_.empty() && !core_->WindowFull();
}

Status Planner::CheckShape(const BatchRows& rows) const {
  const uint32_t tables = static_cast<uint32_t>(options_.table_rows.size());
  if (rows.trainers != options_.trainers || rows.tables != tables ||
      rows.slices.size() != size_t{tables} * rows.trainers) {
    return Status::InvalidArgument("batch " + std::to_string(next_batch() + window_.size() + probe_.size()) + " has " +
                                   std::to_string(rows.trainers) + " slices of " + std::to_string(rows.tables) +
                                   " tables; the oracle plans " + std::to_string(options_.trainers) + " of " +
                                   std::to_string(tables));
  }
  for (uint32_t w = 0; w < rows.trainers; ++w) {
    for (uint32_t t = 0; t < tables; ++t) {
      const SliceTable& s = rows.slice(w, t);
      if (LargestRow(s.rows.data(), s.rows.size()) < options_.table_rows[t]) continue;
      for (data::RowId r : s.rows) {
        if (r >= options_.table_rows[t]) {
          return Status::InvalidArgument("trainer " + std::to_string(w) + " table " + std::to_string(t) + ": row " +
                                         std::to_string(r) + " is not below the table's " +
                                         std::to_string(options_.table_rows[t]) + " rows");
        }
      }
    }
  }
  return Status::Ok();
}

Status Planner::Push(BatchRows rows) {
  ACTORREC_ASSERT(CanPush(), "Push only when CanPush()");
  if (Status s = CheckShape(rows); !s.ok()) return s;
  if (!core_) {
    probe_.push_back(std::move(rows));
    return probe_.size() < ProbeBatches(options_) ? Status::Ok() : RunProbe();
  }
  core_->Push(rows);
  window_.push_back(std::move(rows));
  return Status::Ok();
}

Status Planner::Finish() {
  finished_ = true;
  return core_ ? Status::Ok() : RunProbe();
}

Status Planner::RunProbe() {
  Result<LookaheadChoice> choice = ChooseLookahead(options_, probe_);
  if (!choice.ok()) return choice.status();
  core_ = std::make_unique<LookaheadCore>(options_, owned_, choice->lookahead, /*bounded=*/true);
  report_ = choice->report;
  Refill();
  return Status::Ok();
}

void Planner::Refill() {
  while (!probe_.empty() && !core_->WindowFull()) {
    core_->Push(probe_.front());
    window_.push_back(std::move(probe_.front()));
    probe_.pop_front();
  }
}

bool Planner::Ready() const {
  if (!core_ || window_.empty()) return false;
  return core_->WindowFull() || (finished_ && probe_.empty());
}

Status Planner::PlanNext(BatchPlan* plan) {
  ACTORREC_ASSERT(Ready(), "PlanNext only when Ready()");
  if (Status s = core_->PlanNext(&window_.front(), plan); !s.ok()) return s;
  spare_ = std::move(window_.front());
  window_.pop_front();
  Refill();
  return Status::Ok();
}

bool Planner::Done() const { return finished_ && core_ && window_.empty() && probe_.empty(); }

std::optional<int64_t> Planner::CachedUntil(uint32_t table, data::RowId row) const {
  if (!core_) return std::nullopt;
  return core_->CachedUntil(table, row);
}

}  // namespace actorrec::oracle
