// Topology files for the multi-process tests: a small training run and its
// members on 127.0.0.1.
#pragma once

#include <cstdint>
#include <string>

namespace actorrec::testing {

inline const std::string kTestSecret = "a-test-secret-of-enough-length";

// A small run as a topology: `members` is the [[cluster.member]] part.
inline std::string SplitRun(const std::string& out_dir, const std::string& members, const std::string& mode,
                            int samples = 6144, const std::string& cluster_extra = "",
                            const std::string& dataset_extra = "") {
  return R"(
[run]
name = "split"
output_dir = ")" + out_dir + R"("

[model]
kind = "dlrm"
bottom_mlp = [32, 16]
top_mlp = [32, 1]

[optimizer]
dense = "adagrad"
sparse = "rowwise_adagrad"

[dataset]
samples = )" + std::to_string(samples) + R"(
eval_samples = 1024
row_scale = 0.001
)" + dataset_extra + R"(
[training]
mode = ")" + mode + R"("
batch_size = 512
eval_every = 5
lookahead = 3
cache_rows = 8192

[cluster]
secret = ")" + kTestSecret + R"("
heartbeat_ms = 100
peer_timeout_ms = 3000
join_timeout_ms = 30000
)" + cluster_extra + members;
}

inline std::string Member(const std::string& name, uint16_t port, const std::string& roles, const std::string& extra = "") {
  return "\n[[cluster.member]]\nname = \"" + name + "\"\naddress = \"127.0.0.1\"\nport = " + std::to_string(port) +
         "\nroles = [" + roles + "]\n" + extra;
}

}  // namespace actorrec::testing
