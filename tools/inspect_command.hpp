// The inspector's two commands. `actorrec inspect HOST:PORT`: a running
// train's inspector in the terminal, redrawn in place every second
// (top-like), or one snapshot (--once, --json for scripts). `actorrec report
// RUN_DIR`: a finished run's HTML report (actors/inspector/run_report.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace actorrec {

// Adds `inspect` to `app`; the returned function runs it (exit code).
std::function<int()> AddInspectCommand(CLI::App& app);
// Adds `report` to `app`; the returned function runs it (exit code).
std::function<int()> AddReportCommand(CLI::App& app);

}  // namespace actorrec
