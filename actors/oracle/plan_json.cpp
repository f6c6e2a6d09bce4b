// TrainerPlan -> one line of JSON.
#include "actors/oracle/plan_json.hpp"

#include <charconv>
#include <cstdint>
#include <vector>

namespace actorrec::oracle {
namespace {

void Number(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void Key(const char* name, std::string* out) {
  if (out->back() != '{') out->push_back(',');
  out->push_back('"');
  out->append(name);
  out->append("\":");
}

template <class Vec>
void Numbers(const Vec& v, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    Number(v[i], out);
  }
  out->push_back(']');
}

void Rows(const std::vector<RowSlot>& rows, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < rows.size(); ++i) {
    out->append(i ? ",[" : "[");
    Number(rows[i].table, out);
    out->push_back(',');
    Number(rows[i].row, out);
    out->push_back(',');
    Number(rows[i].slot, out);
    out->push_back(']');
  }
  out->push_back(']');
}

}  // namespace

std::string PlanToJson(const TrainerPlan& plan) {
  std::string out = "{";
  Key("batch", &out);
  Number(plan.batch, &out);
  Key("trainer", &out);
  Number(plan.trainer, &out);
  Key("lookahead", &out);
  Number(plan.lookahead, &out);
  Key("barrier", &out);
  Number(plan.barrier, &out);
  Key("occupancy", &out);
  Number(plan.occupancy, &out);
  Key("prefetch", &out);
  Rows(plan.prefetch, &out);
  Key("privatePrefetch", &out);
  Rows(plan.private_prefetch, &out);
  Key("features", &out);
  out.push_back('[');
  for (size_t i = 0; i < plan.features.size(); ++i) {
    const TableFeatures& f = plan.features[i];
    out.append(i ? ",{" : "{");
    Key("table", &out);
    Number(f.table, &out);
    Key("uniqueSlots", &out);
    Numbers(f.unique_slots, &out);
    Key("inverse", &out);
    Numbers(f.inverse, &out);
    Key("offsets", &out);
    Numbers(f.offsets, &out);
    out.push_back('}');
  }
  out.push_back(']');
  // Only with dedup groups (dataset.dedup_groups), so that a plan without
  // them dumps as it always did.
  if (!plan.bag_groups.empty()) {
    Key("bagGroups", &out);
    out.push_back('[');
    for (size_t i = 0; i < plan.bag_groups.size(); ++i) {
      out.append(i ? ",{" : "{");
      Key("tables", &out);
      Numbers(plan.bag_groups[i].tables, &out);
      Key("bagOf", &out);
      Numbers(plan.bag_groups[i].bag_of, &out);
      out.push_back('}');
    }
    out.push_back(']');
  }
  Key("privateRows", &out);
  Rows(plan.private_rows, &out);
  Key("critical", &out);
  Rows(plan.critical, &out);
  Key("delayed", &out);
  Rows(plan.delayed, &out);
  Key("evictions", &out);
  out.push_back('[');
  for (size_t i = 0; i < plan.evictions.size(); ++i) {
    const Eviction& e = plan.evictions[i];
    out.append(i ? ",[" : "[");
    Number(e.table, &out);
    out.push_back(',');
    Number(e.row, &out);
    out.push_back(',');
    Number(e.slot, &out);
    out.push_back(',');
    Number(e.writer, &out);
    out.push_back(']');
  }
  out.push_back(']');
  out.push_back('}');
  return out;
}

}  // namespace actorrec::oracle
