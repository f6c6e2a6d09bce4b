// Concatenation of split oracles' plans.
#include "actors/oracle/plan_merge.hpp"

#include <algorithm>

#include "base/status.hpp"

namespace actorrec::oracle {

BatchPlan MergePlans(const std::vector<BatchPlan>& parts) {
  ACTORREC_ASSERT(!parts.empty(), "merge at least one plan");
  BatchPlan out;
  out.batch = parts[0].batch;
  out.lookahead = parts[0].lookahead;
  out.barrier = parts[0].barrier;
  out.trainers.resize(parts[0].trainers.size());
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  for (const BatchPlan& p : parts) {
    ACTORREC_ASSERT(p.batch == out.batch && p.lookahead == out.lookahead && p.barrier == out.barrier &&
                        p.trainers.size() == out.trainers.size(),
                    "merged plans are of one batch, planned with one lookahead for the same trainers");
    append(out.prefetch, p.prefetch);
    append(out.critical, p.critical);
    append(out.delayed, p.delayed);
    append(out.evictions, p.evictions);
    for (size_t w = 0; w < out.trainers.size(); ++w) {
      append(out.trainers[w].private_prefetch, p.trainers[w].private_prefetch);
      append(out.trainers[w].private_rows, p.trainers[w].private_rows);
      append(out.trainers[w].features, p.trainers[w].features);
      out.trainers[w].occupancy += p.trainers[w].occupancy;
    }
    out.occupancy += p.occupancy;
  }
  // Every oracle of a split plans the whole batch's dedup groups alike.
  for (size_t w = 0; w < out.trainers.size(); ++w) out.trainers[w].bag_groups = parts[0].trainers[w].bag_groups;
  for (BatchPlan::Own& own : out.trainers) {
    std::stable_sort(own.features.begin(), own.features.end(),
                     [](const TableFeatures& a, const TableFeatures& b) { return a.table < b.table; });
  }
  return out;
}

}  // namespace actorrec::oracle
