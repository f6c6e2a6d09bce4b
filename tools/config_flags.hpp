// The config flags every command shares: --config FILE and --set KEY=VALUE
// (repeatable), and the one way they are loaded and their problems printed.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "configs/config.hpp"

namespace CLI {
class App;
}

namespace actorrec {

struct ConfigFlags {
  std::string path;                    // empty: the embedded configs/local.toml
  std::vector<std::string> overrides;  // --set, in order
};

// Adds --set to `command` (its --config stays the command's own, since its
// help and whether it is required differ from command to command).
void AddSetFlag(CLI::App* command, ConfigFlags* flags);

// Loads flags.path (or the embedded default) with the overrides. On an
// invalid config prints "actorrec <command>: invalid config (N problems):"
// and each problem to `err`, and returns false.
bool LoadConfigFlags(const ConfigFlags& flags, const std::string& command, std::ostream& err, config::Config* out);

// " with --set a=1 --set b=2", or "" without overrides: for start-up lines.
std::string DescribeOverrides(const config::Config& cfg);

}  // namespace actorrec
