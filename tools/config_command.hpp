// `actorrec config reference`: every config key with its type, default and
// meaning, as Markdown (docs/config.md is its output).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace actorrec {

// Adds `config` to `app`. The returned function runs it and gives the exit
// code; call it only when `config` was parsed.
std::function<int()> AddConfigCommand(CLI::App& app);

}  // namespace actorrec
