// HardwareProfile: the rates of a machine (or of a cluster's hosts) that the
// cost model and the simulator turn plan statistics into time with: what
// `actorrec bench --profile` measures, or a TOML file a user writes for
// hardware they do not have at hand (e.g. 8 GPUs per host on 100 Gbit/s).
//
// TOML (every key in [hardware], rates in SI units):
//   name = "this machine"
//   gemm_gflops = 95.0         # dense GEMM rate of one trainer, GFLOP/s
//   memory_gbps = 12.0         # memory bandwidth one trainer gets, GB/s (row gather/scatter)
//   network_gbit = 10.0        # each host's link, Gbit/s, each direction
//   network_latency_us = 50.0  # one message, one way, microseconds
//   host_device_gbps = 0.0     # host <-> accelerator, GB/s; 0: trainers compute in host memory
//   trainer_memory_gib = 16.0  # memory a trainer may give its cache
//   shard_memory_gib = 64.0    # memory of one embedding shard
//   host_cores = 2             # optional: cores of one host; 0 or absent:
//                              # not known, each trainer gets a core of its own
//   trainer_gflops = 21.4      # optional, from `actorrec plan --calibrate`: the GEMM
//                              # rate one trainer reached in a measured run, where it
//                              # ran (co-location included); 0 or absent: gemm_gflops
//                              # at the share of a core the topology gives
//   trainer_spread = 0.31      # optional, from the same: the standard deviation of one
//                              # trainer's per-batch compute over its mean; the model
//                              # adds the wait for the slowest of W trainers
//   shard_row_us = 0.23        # optional, from `actorrec bench --profile`: processor time
//                              # one row costs an embedding shard and a cache partition
//                              # together, per fetch or write-back (the shard code path
//                              # in process, on an idle core); 0 or absent: not counted
// A file that lacks a key (but the optional ones), has one the reader does not know or a
// value out of range is an error naming the file, line and key (configs/toml_reader).
#pragma once

#include <string>

#include "base/status.hpp"

namespace actorrec::planner {

struct HardwareProfile {
  std::string name = "unnamed";
  double gemm_flops = 0;       // FLOP/s
  double memory_bw = 0;        // bytes/s
  double network_bw = 0;       // bytes/s of one link, each direction
  double network_latency = 0;  // seconds
  double host_device_bw = 0;   // bytes/s; 0: none (host memory)
  double trainer_memory = 0;   // bytes
  double shard_memory = 0;     // bytes
  double host_cores = 0;       // cores one host's processes share; 0: not known (a core per trainer)
  double trainer_flops = 0;    // FLOP/s one trainer reached in place (calibrated); 0: gemm_flops × share
  double trainer_spread = 0;   // std of a trainer's per-batch compute / its mean (calibrated); 0: alike
  double shard_row = 0;        // seconds of processor time per row moved (fetch or write-back), both ends,
                               // on an idle core; 0: not counted
};

// Parses a profile; `path` names the file in errors. InvalidArgument with
// every problem ("file:line: hardware.key: …"), one a line.
Result<HardwareProfile> ParseProfile(const std::string& text, const std::string& path);
// Reads and parses a file; NotFound / IoError name it.
Result<HardwareProfile> LoadProfile(const std::string& path);
// The TOML text ParseProfile reads back to the same values (to 6 digits).
std::string ProfileToToml(const HardwareProfile& profile, const std::string& comment);

}  // namespace actorrec::planner
