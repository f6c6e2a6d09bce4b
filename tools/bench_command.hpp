// `actorrec bench {oracle,data,train,cluster,simulate,all}`: runs the bench
// programs (tools/bench, found beside this binary) with a small size, or
// the documented sizes with --full; shows their tables and keeps their
// output, CSV tables and SVG charts in a run directory. `--profile`
// measures this machine's hardware profile into that directory.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace actorrec {

// Adds `bench` to `app`. The returned function runs it and gives the exit
// code; call it only when `bench` was parsed.
std::function<int()> AddBenchCommand(CLI::App& app);

}  // namespace actorrec
