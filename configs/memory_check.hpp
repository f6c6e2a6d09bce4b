// The config's sizes against the memory of the machine: every allocation
// that grows in proportion to a key's value (the trainers' row caches, the
// dense replicas, a batch's activations, the oracle's lookahead window, the
// held-out scores) is estimated from below, per member of the cluster, and a
// member that could not hold them is a problem naming the key to lower, with
// what it needs and what the machine has. So a size that cannot fit is a
// config error before anything starts, instead of std::bad_alloc mid-start.
//
// The estimates are lower bounds: a table count the data decides counts as
// one table, a wide model's extra embedding column and optimizer state of the
// dense parameters are left out. Passing the check does not promise the run
// fits; failing it means it cannot.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "configs/config.hpp"

namespace actorrec::config {

class TableReader;

// How much memory the checks allow, and where that figure came from.
struct MemoryBudget {
  uint64_t bytes = 0;
  std::string source;  // for messages: "this machine's 25.2 GB", "the 8.0 GB limit of this process's cgroup"
};

// The machine's physical memory, or the cgroup's limit (memory.max) when
// that is lower.
MemoryBudget MachineMemory();

// ParseConfig (config.hpp) with the sizes checked against `memory` instead
// of this machine's: for tests, and to check a config for another machine.
Config ParseConfig(std::string_view toml_text, const std::string& path, const MemoryBudget& memory);

// The readers of the tables whose keys the check names (their lines).
struct MemoryKeys {
  TableReader* model;
  TableReader* dataset;
  TableReader* training;
};

// Records a problem for every key whose allocations alone exceed `budget`
// on some member, or, when none does alone, one for the largest when
// together they do. REQUIRES: `config` passed every other check.
void CheckMemory(const Config& config, const MemoryKeys& keys, const MemoryBudget& budget);

}  // namespace actorrec::config
