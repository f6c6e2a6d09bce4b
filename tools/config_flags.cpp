#include "tools/config_flags.hpp"

#include <CLI/CLI.hpp>

#include <ostream>

namespace actorrec {

void AddSetFlag(CLI::App* command, ConfigFlags* flags) {
  command
      ->add_option("--set", flags->overrides,
                   "override a config key, e.g. --set training.batch_size=4096 --set training.mode=lrpp (repeatable; "
                   "the value is TOML, or text; validated as the file is; every key is in docs/config.md); "
                   "KEY= with nothing after the = removes the key (e.g. --set model.deep_mlp= to switch to dlrm)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

bool LoadConfigFlags(const ConfigFlags& flags, const std::string& command, std::ostream& err, config::Config* out) {
  try {
    *out = config::LoadConfigWith(flags.path, flags.overrides);
    return true;
  } catch (const config::ConfigError& e) {
    const size_t n = e.problems().size();
    err << "actorrec " << command << ": invalid config (" << n << " problem" << (n == 1 ? "" : "s") << "):\n"
        << e.what() << "\n";
    return false;
  }
}

std::string DescribeOverrides(const config::Config& cfg) {
  std::string out;
  for (const std::string& o : cfg.overrides) out.append(out.empty() ? " with" : "").append(" --set ").append(o);
  return out;
}

}  // namespace actorrec
