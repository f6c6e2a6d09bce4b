// `actorrec bench train --vs-pytorch`: the plain parts (reading the two
// programs' results, the script's arguments, the line).
#include "tools/bench_vs_pytorch.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace actorrec {

Result<double> IdealRate(const CsvRows& csv, const std::string& path) {
  const int mode = csv.Column("mode"), driver = csv.Column("driver"), rate = csv.Column("samples_per_s");
  if (mode < 0 || driver < 0 || rate < 0) {
    return Status::InvalidArgument(path + ": no mode, driver or samples_per_s column");
  }
  for (const auto& row : csv.rows) {
    if (row[mode] == "ideal" && row[driver] == "actors") return std::strtod(row[rate].c_str(), nullptr);
  }
  return Status::InvalidArgument(path + ": no row of mode ideal on the actor pipeline");
}

std::optional<double> TorchRate(const std::string& output) {
  std::istringstream lines(output);
  std::optional<double> rate;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("dlrm_torch ", 0) != 0) continue;
    const size_t at = line.find(" samples_per_s=");
    if (at == std::string::npos) continue;
    char* end = nullptr;
    const char* start = line.c_str() + at + 15;
    const double v = std::strtod(start, &end);
    if (end != start && v > 0) rate = v;
  }
  return rate;
}

bool RanOnCuda(const std::string& train_bench_output) {
  std::istringstream lines(train_bench_output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("backend: ", 0) == 0) return line.rfind("backend: cuda", 0) == 0;
  }
  return false;
}

std::vector<std::string> TorchArgs(int batches, const std::string& row_scale, int trainers, bool cuda) {
  // train_bench leaves its first 2 batches untimed; so does the script.
  std::vector<std::string> args = {"--device", cuda ? "cuda" : "cpu", "--batch", "2048", "--row-scale", row_scale,
                                   "--warmup", "2", "--iters", std::to_string(batches > 2 ? batches - 2 : 1)};
  if (!cuda) args.insert(args.end(), {"--threads", std::to_string(trainers)});
  return args;
}

std::string VsPytorchLine(bool cuda, double actorrec_rate, double torch_rate) {
  char line[256];
  std::snprintf(line, sizeof line,
                "vs PyTorch (%s, batch 2048): actorrec %.0f samples/s (train_bench, ideal), PyTorch %.0f samples/s "
                "(dlrm_torch.py): actorrec/PyTorch = %.3f",
                cuda ? "cuda" : "cpu", actorrec_rate, torch_rate, torch_rate > 0 ? actorrec_rate / torch_rate : 0.0);
  return line;
}

}  // namespace actorrec
