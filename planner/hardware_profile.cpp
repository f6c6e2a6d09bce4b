// Reading and writing hardware profiles (TOML).
#include "planner/hardware_profile.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include <toml++/toml.h>

#include "configs/toml_reader.hpp"

namespace actorrec::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Line(const char* key, double value, const char* comment) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s = %.6g  # %s\n", key, value, comment);
  return buf;
}

}  // namespace

Result<HardwareProfile> ParseProfile(const std::string& text, const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  config::ProblemList problems(path);
  config::TableReader root(&doc, "", &problems);
  config::TableReader hw = root.Table("hardware");
  if (!hw.present()) root.Require("hardware", "a [hardware] table (see docs/planner.md)");
  const config::RealRange positive{0, true};
  const config::RealRange non_negative{0, false};
  HardwareProfile p;
  auto real = [&](std::string_view key, const config::RealRange& range, double scale, double* out) {
    if (!hw.present()) return;
    if (!hw.Require(key, "a number")) return;
    if (auto v = hw.Real(key, range)) *out = *v * scale;
  };
  if (hw.present()) {
    if (auto name = hw.String("name")) p.name = *name;
  }
  real("gemm_gflops", positive, 1e9, &p.gemm_flops);
  real("memory_gbps", positive, 1e9, &p.memory_bw);
  real("network_gbit", positive, 1e9 / 8, &p.network_bw);
  real("network_latency_us", non_negative, 1e-6, &p.network_latency);
  real("host_device_gbps", non_negative, 1e9, &p.host_device_bw);
  real("trainer_memory_gib", positive, kGiB, &p.trainer_memory);
  real("shard_memory_gib", positive, kGiB, &p.shard_memory);
  if (hw.present()) {
    // Optional: profiles written before it stay valid.
    if (auto v = hw.Real("host_cores", non_negative)) p.host_cores = *v;
    // Optional, written by `actorrec plan --calibrate` (planner/calibration.hpp).
    if (auto v = hw.Real("trainer_gflops", non_negative)) p.trainer_flops = *v * 1e9;
    if (auto v = hw.Real("trainer_spread", config::RealRange{0, false, 10, false})) p.trainer_spread = *v;
    // Optional, written by `actorrec bench --profile` (tools/bench_profile.cpp).
    if (auto v = hw.Real("shard_row_us", config::RealRange{0, false, 1e6, false})) p.shard_row = *v * 1e-6;
    static constexpr std::string_view kKnown[] = {
        "name",     "gemm_gflops", "memory_gbps", "network_gbit",  "network_latency_us", "host_device_gbps",
        "trainer_memory_gib", "shard_memory_gib", "host_cores", "trainer_gflops", "trainer_spread",
        "shard_row_us"};
    hw.Finish(kKnown);
  }
  static constexpr std::string_view kRoot[] = {"hardware"};
  root.Finish(kRoot);
  if (!problems.empty()) {
    std::string message;
    for (const config::Problem& problem : problems.Sorted()) {
      if (!message.empty()) message += "\n";
      message += problem.ToString();
    }
    return Status::InvalidArgument(message);
  }
  return p;
}

Result<HardwareProfile> LoadProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the hardware profile");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": reading the hardware profile failed");
  return ParseProfile(text.str(), path);
}

std::string ProfileToToml(const HardwareProfile& p, const std::string& comment) {
  std::string out;
  if (!comment.empty()) {
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  }
  out += "[hardware]\nname = " + config::Quote(p.name) + "\n";
  out += Line("gemm_gflops", p.gemm_flops / 1e9, "dense GEMM rate of one trainer, GFLOP/s");
  out += Line("memory_gbps", p.memory_bw / 1e9, "memory bandwidth of one trainer, GB/s");
  out += Line("network_gbit", p.network_bw * 8 / 1e9, "each host's link, Gbit/s, each direction");
  out += Line("network_latency_us", p.network_latency / 1e-6, "one message, one way");
  out += Line("host_device_gbps", p.host_device_bw / 1e9, "host <-> accelerator, GB/s; 0: host memory");
  out += Line("trainer_memory_gib", p.trainer_memory / kGiB, "memory a trainer may give its cache");
  out += Line("shard_memory_gib", p.shard_memory / kGiB, "memory of one embedding shard");
  if (p.host_cores > 0) out += Line("host_cores", p.host_cores, "cores one host's processes share");
  if (p.trainer_flops > 0) {
    out += Line("trainer_gflops", p.trainer_flops / 1e9, "GEMM rate one trainer reached in place (calibrated)");
  }
  if (p.trainer_spread > 0) {
    out += Line("trainer_spread", p.trainer_spread, "std of a trainer's per-batch compute over its mean");
  }
  if (p.shard_row > 0) {
    out += Line("shard_row_us", p.shard_row / 1e-6, "a row's processor time in a shard and a cache partition, idle core");
  }
  return out;
}

}  // namespace actorrec::planner
