// Accumulating plan statistics and printing them.
#include "actors/oracle/plan_stats.hpp"

#include <algorithm>
#include <charconv>

namespace actorrec::oracle {
namespace {

// Fixed notation with `digits` decimals: std::to_chars is exact and
// locale-free, so the same figures always print the same text.
std::string Fixed(double v, int digits) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
  return std::string(buf, r.ptr);
}

void Field(const char* key, const std::string& value, std::string* out) {
  if (out->back() != '{') out->push_back(',');
  out->push_back('"');
  out->append(key).append("\":").append(value);
}

}  // namespace

void PlanStats::Add(const BatchPlan& plan) {
  Totals b;
  b.prefetch = plan.prefetch.size();
  b.critical = plan.critical.size();
  b.delayed = plan.delayed.size();
  b.evictions = plan.evictions.size();
  for (const BatchPlan::Own& own : plan.trainers) {
    b.private_prefetch += own.private_prefetch.size();
    b.private_rows += own.private_rows.size();
  }
  b.evictions += b.private_prefetch;
  b.unique = b.critical + b.delayed + b.private_rows;
  b.hits = b.unique - b.prefetch - b.private_prefetch;
  b.fetched = plan.trainers.size() * b.prefetch + b.private_prefetch;

  totals_.unique += b.unique;
  totals_.hits += b.hits;
  totals_.prefetch += b.prefetch;
  totals_.private_prefetch += b.private_prefetch;
  totals_.fetched += b.fetched;
  totals_.private_rows += b.private_rows;
  totals_.critical += b.critical;
  totals_.delayed += b.delayed;
  totals_.evictions += b.evictions;
  last_ = b;
  occupancy_last_ = plan.occupancy;
  occupancy_peak_ = std::max(occupancy_peak_, plan.occupancy);
  for (const BatchPlan::Own& own : plan.trainers) trainer_occupancy_peak_ = std::max(trainer_occupancy_peak_, own.occupancy);
  windows_ended_ += !direct_ && plan.lookahead == 0;
  lookahead_last_ = plan.lookahead;
  ++batches_;
}

double PlanStats::HitShare() const {
  return totals_.unique == 0 ? 0.0 : static_cast<double>(totals_.hits) / static_cast<double>(totals_.unique);
}

double PlanStats::PerBatch(uint64_t total) const {
  return batches_ == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(batches_);
}

std::string PlanStats::ToJson() const {
  const Totals& t = totals_;
  std::string out = "{";
  Field("batches", std::to_string(batches_), &out);
  Field("occupancy_last", std::to_string(occupancy_last_), &out);
  Field("occupancy_peak", std::to_string(occupancy_peak_), &out);
  Field("hit_share", Fixed(HitShare(), 6), &out);
  const struct {
    const char* name;
    uint64_t total;
  } rows[] = {{"unique", t.unique},   {"hits", t.hits},         {"prefetch", t.prefetch},
              {"private_prefetch", t.private_prefetch},         {"fetched", t.fetched},
              {"private", t.private_rows}, {"critical", t.critical}, {"delayed", t.delayed},
              {"evictions", t.evictions}};
  for (const auto& r : rows) {
    Field((std::string(r.name) + "_rows_per_batch").c_str(), Fixed(PerBatch(r.total), 3), &out);
  }
  for (const auto& r : rows) Field((std::string(r.name) + "_rows").c_str(), std::to_string(r.total), &out);
  Field("bytes_per_row", std::to_string(bytes_per_row_), &out);
  const struct {
    const char* name;
    uint64_t rows;
  } bytes[] = {{"fetched_bytes", t.fetched},   {"private_bytes", t.private_rows}, {"critical_bytes", t.critical},
               {"delayed_bytes", t.delayed}, {"eviction_bytes", t.evictions}};
  for (const auto& b : bytes) Field(b.name, std::to_string(b.rows * bytes_per_row_), &out);
  Field("trainer_occupancy_peak", std::to_string(trainer_occupancy_peak_), &out);
  Field("lookahead_last", std::to_string(lookahead_last_), &out);
  Field("windows_ended", std::to_string(windows_ended_), &out);
  out.push_back('}');
  return out;
}

std::string PlanStats::Summary() const {
  const Totals& t = totals_;
  std::string s = std::to_string(batches_);
  s.append(" batches: ")
      .append(Fixed(PerBatch(t.unique), 1))
      .append(" unique rows/batch, ")
      .append(Fixed(100.0 * HitShare(), 1))
      .append(" % from the cache; per batch prefetch ")
      .append(Fixed(PerBatch(t.prefetch), 1))
      .append(" shared + ")
      .append(Fixed(PerBatch(t.private_prefetch), 1))
      .append(" private rows, sync ")
      .append(Fixed(PerBatch(t.critical), 1))
      .append(" critical + ")
      .append(Fixed(PerBatch(t.delayed), 1))
      .append(" delayed, ")
      .append(Fixed(PerBatch(t.private_rows), 1))
      .append(" private unsynced, ")
      .append(Fixed(PerBatch(t.evictions), 1))
      .append(" evicted; occupancy ")
      .append(std::to_string(occupancy_last_))
      .append(" (peak ")
      .append(std::to_string(occupancy_peak_))
      .append("; one trainer's peak ")
      .append(std::to_string(trainer_occupancy_peak_))
      .append(")");
  if (windows_ended_ > 0) {
    s.append("; the lookahead window ended early ")
        .append(std::to_string(windows_ended_))
        .append(" time(s), lookahead now ")
        .append(std::to_string(lookahead_last_));
  }
  return s;
}

}  // namespace actorrec::oracle
