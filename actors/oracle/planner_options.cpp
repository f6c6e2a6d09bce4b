// Checks and derived values of PlannerOptions.
#include "actors/oracle/planner_options.hpp"

#include <string>

namespace actorrec::oracle {

std::vector<Partition> OnePartition(size_t num_tables, uint32_t capacity) {
  Partition p;
  p.capacity = capacity;
  for (size_t t = 0; t < num_tables; ++t) p.tables.push_back(static_cast<uint32_t>(t));
  return {p};
}

uint32_t FirstSlot(const PlannerOptions& options, uint32_t p) {
  uint64_t first = 0;
  for (uint32_t q = 0; q < p; ++q) first += options.partitions[q].capacity;
  return static_cast<uint32_t>(first);
}

Status Validate(const PlannerOptions& options) {
  if (options.trainers == 0 || options.trainers > 65535) {
    return Status::InvalidArgument("the oracle needs 1 to 65535 trainers, not " + std::to_string(options.trainers));
  }
  std::vector<int> seen(options.table_rows.size(), 0);
  uint64_t slots = 0;
  for (size_t p = 0; p < options.partitions.size(); ++p) {
    const Partition& part = options.partitions[p];
    if (part.capacity == 0) return Status::InvalidArgument("cache partition " + std::to_string(p) + " has no slots");
    slots += part.capacity;
    for (uint32_t t : part.tables) {
      if (t >= seen.size()) {
        return Status::InvalidArgument("cache partition " + std::to_string(p) + " names table " + std::to_string(t) +
                                       " of " + std::to_string(seen.size()));
      }
      if (seen[t]++) return Status::InvalidArgument("table " + std::to_string(t) + " is in two cache partitions");
    }
  }
  if (slots > UINT32_MAX) return Status::InvalidArgument("the cache partitions hold more than 2^32 slots");
  for (size_t t = 0; t < seen.size(); ++t) {
    if (!seen[t]) return Status::InvalidArgument("table " + std::to_string(t) + " is in no cache partition");
    if (options.table_rows[t] > uint64_t{UINT32_MAX} + 1) {
      return Status::InvalidArgument("table " + std::to_string(t) + " has more than 2^32 rows");
    }
  }
  if (options.lookahead == 0 && options.max_lookahead == 0) {
    return Status::InvalidArgument("auto lookahead needs max_lookahead >= 1");
  }
  if (options.first_batch >= (uint64_t{1} << 62)) {
    return Status::InvalidArgument("first batch " + std::to_string(options.first_batch) + " is beyond 2^62");
  }
  for (size_t i = 0; i < options.owned.size(); ++i) {
    if (options.owned[i] >= options.partitions.size() || (i > 0 && options.owned[i] <= options.owned[i - 1])) {
      return Status::InvalidArgument("owned partitions must be ascending indices below " +
                                     std::to_string(options.partitions.size()));
    }
  }
  return Status::Ok();
}

std::vector<uint32_t> OwnedPartitions(const PlannerOptions& options) {
  if (!options.owned.empty()) return options.owned;
  std::vector<uint32_t> all(options.partitions.size());
  for (uint32_t p = 0; p < all.size(); ++p) all[p] = p;
  return all;
}

}  // namespace actorrec::oracle
