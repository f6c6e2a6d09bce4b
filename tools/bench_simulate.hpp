// `actorrec bench simulate`: the cluster simulator (planner/simulator.hpp)
// replaying the oracle's real plans of generated Criteo-Kaggle-shaped data,
// by default in the Bagpipe paper's setting (8 trainers, global batch
// 16384, the full Criteo Kaggle cardinalities, 10 Gbit/s links), each mode
// beside `ideal` and `no_cache`, with the cost model's prediction beside
// each simulated time; a table, a CSV and an SVG chart in the run directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace actorrec {

struct SimulateFlags {
  std::vector<int> trainers = {8};  // one simulation per W
  uint64_t batches = 12;            // plans replayed per mode
  std::string hardware;             // a profile; empty: the built-in Bagpipe-like one
  std::string collective = "auto";  // cluster.collective: auto (NCCL where the profile has GPUs), nccl, tls, gloo
};

// Returns the exit code; adds the files it wrote to *written.
int RunSimulate(const SimulateFlags& flags, const std::filesystem::path& dir, std::vector<std::string>* written);

}  // namespace actorrec
