// `actorrec bench --profile`: measures this machine's hardware profile
// (planner/hardware_profile.hpp) in a few seconds: the sgemm rate of the
// default DLRM's shapes on one thread, memory copy bandwidth, and TCP over
// 127.0.0.1 (bandwidth and one-way latency) as the network of a cluster
// whose members share this host.
#pragma once

#include <string>

#include "base/status.hpp"
#include "planner/hardware_profile.hpp"

namespace actorrec {

struct MeasuredProfile {
  planner::HardwareProfile profile;
  std::string how;  // one line per figure: what was timed
};

Result<MeasuredProfile> MeasureProfile();

}  // namespace actorrec
