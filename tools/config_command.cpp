#include "tools/config_command.hpp"

#include <iostream>

#include "actors/common/exit_codes.hpp"
#include "configs/key_reference.hpp"

namespace actorrec {

std::function<int()> AddConfigCommand(CLI::App& app) {
  auto* config = app.add_subcommand("config", "Describe the config format.");
  config->require_subcommand(1);
  auto* reference = config->add_subcommand(
      "reference", "Print every config key with its type, default and meaning as Markdown (docs/config.md).");
  return [reference]() -> int {
    if (!reference->parsed()) return kExitUsage;
    const std::vector<std::string> problems = config::ReferenceProblems();
    for (const std::string& p : problems) std::cerr << "actorrec config reference: " << p << "\n";
    std::cout << config::ConfigReferenceMarkdown();
    return problems.empty() ? kExitOk : kExitFailure;
  };
}

}  // namespace actorrec
