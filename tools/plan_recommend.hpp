// `actorrec plan --recommend --hardware FILE`: plans a sample of the
// config's data for candidate batch sizes, cache sizes and lookaheads
// (within the profile's memory), predicts each one's iteration with the
// cost model (planner/cost_model.hpp), and prints the best, the predicted
// time of every mode at that choice, and the term that dominates.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "configs/config.hpp"

namespace actorrec {

// Returns the exit code: 0, 1 (data, planning), 2 (the profile).
// `one_host`: every member of the topology shares one host's cores (the
// network testbed; WorkloadOf).
int RunRecommend(const config::Config& cfg, uint64_t sample_batches, const std::string& hardware_path,
                 bool one_host, std::ostream& out, std::ostream& err);

}  // namespace actorrec
