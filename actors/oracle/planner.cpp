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
  PlannerOptions from = options_;
  from.first_batch = next_batch();
  // It does not fail: where even L = 1 does not fit, windows end early.
  Result<LookaheadChoice> choice = ChooseLookahead(from, probe_, /*may_end_window=*/true);
  ACTORREC_ASSERT(choice.ok(), choice.status().message());
  core_ = std::make_unique<LookaheadCore>(from, owned_, choice->lookahead, /*bounded=*/true, /*may_flush=*/true);
  Report(windows_ended_ == 0 ? choice->report : "from batch " + std::to_string(from.first_batch) + ": " + choice->report,
         /*window_ended=*/false);
  Refill();
  return Status::Ok();
}

Status Planner::EndWindow() {
  const uint64_t last = next_batch() - 1;
  // Every partition's capacity, not only the owned ones: oracles split by
  // table end their windows together and say the same.
  std::string slots;
  for (size_t p = 0; p < options_.partitions.size(); ++p) {
    slots += (p > 0 ? " + " : "") + std::to_string(options_.partitions[p].capacity);
  }
  ++windows_ended_;
  Report("batch " + std::to_string(last) + " ended the window (lookahead 0, every cached row written back): " + slots +
             " slots could not go on with lookahead " + std::to_string(core_->lookahead()),
         /*window_ended=*/true);
  planned_before_ += core_->planned();
  core_.reset();
  while (!window_.empty()) {
    probe_.push_front(std::move(window_.back()));
    window_.pop_back();
  }
  // At the end of the data no Push will fill the probe: probe what is left.
  return finished_ && !probe_.empty() ? RunProbe() : Status::Ok();
}

void Planner::Report(const std::string& part, bool window_ended) {
  // The first windows in full, then their count and the latest: a cache
  // that holds one batch at a time ends a window at every batch.
  constexpr uint32_t kWindowsInFull = 4;
  if (windows_ended_ <= kWindowsInFull) {
    kept_ += (kept_.empty() ? "" : "; ") + part;
    report_ = kept_;
    return;
  }
  latest_ = window_ended ? part : latest_ + "; " + part;
  report_ = kept_ + "; … " + std::to_string(windows_ended_) + " windows ended early in all, the last: " + latest_;
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

bool Planner::MustEndWindow() {
  ACTORREC_ASSERT(Ready(), "MustEndWindow only when Ready()");
  return core_->MustEndWindow();
}

Status Planner::PlanNext(BatchPlan* plan) { return PlanNext(plan, /*end_window=*/false); }

Status Planner::PlanNext(BatchPlan* plan, bool end_window) {
  ACTORREC_ASSERT(Ready(), "PlanNext only when Ready()");
  ACTORREC_ASSERT(!end_window || options_.lookahead == 0, "only an automatic L ends its window early");
  if (Status s = core_->PlanNext(&window_.front(), plan, end_window); !s.ok()) return s;
  spare_ = std::move(window_.front());
  window_.pop_front();
  if (core_->flushed()) return EndWindow();
  Refill();
  return Status::Ok();
}

bool Planner::Done() const { return finished_ && window_.empty() && probe_.empty(); }

std::optional<int64_t> Planner::CachedUntil(uint32_t table, data::RowId row) const {
  if (!core_) return std::nullopt;
  return core_->CachedUntil(table, row);
}

}  // namespace actorrec::oracle
