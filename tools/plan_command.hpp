// `actorrec plan`: the oracle's plans of a config's first batches as JSON
// lines (docs/plan_format.md), for looking at what the cache would do
// without training.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace actorrec {

// Adds `plan` to `app`. The returned function runs it and gives the exit
// code; call it only when `plan` was parsed.
std::function<int()> AddPlanCommand(CLI::App& app);

}  // namespace actorrec
