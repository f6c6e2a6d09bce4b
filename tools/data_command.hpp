// `actorrec data …`: dataset conversion, generation and statistics.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace actorrec {

// Adds `data` and its subcommands to `app`. The returned function runs the
// subcommand that was parsed and gives the exit code; call it only when
// the `data` subcommand was parsed. `config_of` loads --config (or the
// embedded default) and reports errors itself (returns false then).
std::function<int()> AddDataCommands(CLI::App& app);

}  // namespace actorrec
