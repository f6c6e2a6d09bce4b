// `actorrec bench train --vs-pytorch`: train_bench's DLRM beside the same
// model in PyTorch (tools/bench/dlrm_torch.py), on the device train_bench
// used, and the ratio of their rates (issue 21's comparison; docs/gpu.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "tools/bench_report.hpp"

namespace actorrec {

// train_bench's rate of the ideal mode on the actor pipeline (the mode
// closest to PyTorch's: every row in memory), from its CSV table.
// InvalidArgument naming the file when the row or column is missing.
Result<double> IdealRate(const CsvRows& csv, const std::string& path);

// samples_per_s of dlrm_torch.py's result line in its output, if any.
std::optional<double> TorchRate(const std::string& output);

// Whether train_bench's output says it trained on CUDA ("backend: cuda …").
bool RanOnCuda(const std::string& train_bench_output);

// The script's arguments for a train_bench run of `batches` batches of
// 2048 at `row_scale` on `trainers` threads (the CPU: as many torch
// threads), on cuda or cpu.
std::vector<std::string> TorchArgs(int batches, const std::string& row_scale, int trainers, bool cuda);

// The line printed and kept: both rates and actorrec's over PyTorch's.
std::string VsPytorchLine(bool cuda, double actorrec_rate, double torch_rate);

}  // namespace actorrec
