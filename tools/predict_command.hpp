// `actorrec predict`: scores samples with a checkpoint's parameters and
// writes one line per sample (label, click probability) as CSV.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace actorrec {

// Adds `predict` to `app`. The returned function runs it and gives the exit
// code; call it only when `predict` was parsed.
std::function<int()> AddPredictCommand(CLI::App& app);

}  // namespace actorrec
