// The round figures the cost model's and the calibration's hand-computed
// cases share: slow hardware and two trainers, so that every term comes out
// in whole milliseconds or microseconds.
#pragma once

#include "planner/cost_model.hpp"
#include "planner/hardware_profile.hpp"

namespace actorrec::planner::testing {

// 1 GFLOP/s, 1 GB/s memory, 1 MB/s links with 1 ms latency.
inline HardwareProfile Slow() {
  HardwareProfile hw;
  hw.gemm_flops = 1e9;
  hw.memory_bw = 1e9;
  hw.network_bw = 1e6;
  hw.network_latency = 1e-3;
  return hw;
}

// W = 2, B = 100: a slice of 50 samples, 1 MFLOP and 10 lookups of 8 bytes
// each; 1000 dense gradient bytes; rows of 16 bytes, 12 in the sync. The
// chain collective: a sum of x bytes takes 2 x / 1e6 + 2 ms.
inline Workload Two() {
  Workload w;
  w.trainers = 2;
  w.shards = 1;
  w.shard_hosts = 1;
  w.batch = 100;
  w.flops_per_sample = 1e6;
  w.dense_bytes = 1000;
  w.lookups_per_sample = 10;
  w.embedding_bytes = 8;
  w.row_bytes = 16;
  w.sync_row_bytes = 12;
  return w;
}

}  // namespace actorrec::planner::testing
