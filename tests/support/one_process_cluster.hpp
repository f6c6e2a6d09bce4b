// The [cluster] section of a test config that runs every role in one
// process: what command-line tests append to their own [run] … [training].
#pragma once

#include <cstdint>
#include <string>

namespace actorrec::testing {

// One member "l" on 127.0.0.1 with every role; `trainers` and
// `embedding_shards` are written only when non-zero (else the defaults).
inline std::string OneProcessCluster(uint32_t trainers = 0, uint32_t embedding_shards = 0) {
  std::string s =
      "[cluster]\n"
      "secret = \"one-process-test-secret\"\n"
      "[[cluster.member]]\n"
      "name = \"l\"\n"
      "address = \"127.0.0.1\"\n"
      "roles = [\"all\"]\n";
  if (trainers != 0) s.append("trainers = ").append(std::to_string(trainers)).append("\n");
  if (embedding_shards != 0) s.append("embedding_shards = ").append(std::to_string(embedding_shards)).append("\n");
  return s;
}

}  // namespace actorrec::testing
