// `actorrec plan --config F [--batches N] [--out plans.jsonl] [--trainer W]`.
#include "tools/plan_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/exit_codes.hpp"
#include "base/logging.hpp"
#include "configs/config.hpp"
#include "tools/config_flags.hpp"
#include "tools/plan_calibrate.hpp"
#include "tools/plan_recommend.hpp"
#include "tools/plan_sample.hpp"

namespace actorrec {
namespace {

constexpr const char* kFields =
    "Output: one JSON object per line, per batch and trainer (batch-major), keys in this order:\n"
    "  batch, trainer, lookahead (L), barrier (the prefetch waits until every write-back of batches\n"
    "  <= barrier = max(first_batch - 1, batch - L - 1) is acknowledged; -1: none), occupancy (slots\n"
    "  of this trainer's cache held while the batch runs, quarantine included), prefetch\n"
    "  ([table,row,slot] shared misses, every trainer fetches them), privatePrefetch (misses only this\n"
    "  trainer fetches), features (per table:\n"
    "  uniqueSlots, inverse, offsets: sample i reads uniqueSlots[inverse[p]] for p in\n"
    "  [offsets[i], offsets[i+1])), privateRows (updated by this trainer alone, never synced), critical\n"
    "  (shared rows synced before the next batch), delayed (synced in the background), evictions\n"
    "  ([table,row,slot,writer], freed after the batch; writer writes the row back).\n"
    "Slots are indices into each trainer's cache of training.cache_rows rows. The chosen L and a\n"
    "summary go to stderr. Full description: docs/plan_format.md.";

struct PlanFlags {
  ConfigFlags config;
  uint64_t batches = 10;
  std::string out = "-";
  std::optional<uint32_t> trainer;
  bool recommend = false;
  bool one_host = false;
  std::string hardware;
  std::vector<std::string> calibrate;  // run directories
  uint32_t warmup = 2;
};

int Fail(int code, const std::string& message) {
  std::cerr << "actorrec plan: " << message << "\n";
  return code;
}

int RunPlan(const PlanFlags& flags) {
  config::Config cfg;
  ConfigFlags config = flags.config;
  if (!flags.calibrate.empty() && config.path.empty()) {
    // The runs' own config: the cluster bench writes it beside the metrics.
    config.path = flags.calibrate.front() + "/cluster.toml";
    if (!std::filesystem::exists(config.path)) {
      return Fail(kExitUsage, config.path + " does not exist: name the runs' config with --config");
    }
  }
  if (!LoadConfigFlags(config, "plan", std::cerr, &cfg)) return kExitUsage;
  // Readers may log; the log goes to stderr, the plans (maybe) to stdout.
  if (!InitLogging("plan", "warn")) return Fail(kExitFailure, "cannot start logging");
  if (!flags.calibrate.empty()) {
    return RunCalibrate(cfg, flags.calibrate, flags.warmup, flags.hardware, flags.out, std::cout, std::cerr);
  }
  if (flags.recommend) return RunRecommend(cfg, flags.batches, flags.hardware, flags.one_host, std::cout, std::cerr);

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (flags.out != "-") {
    const auto parent = std::filesystem::path(flags.out).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    file.open(flags.out, std::ios::binary | std::ios::trunc);
    if (!file) return Fail(kExitFailure, "cannot write " + flags.out);
    out = &file;
  }
  PlanSample sample;
  sample.batches = flags.batches;
  sample.trainer = flags.trainer;
  oracle::DumpReport report;
  const Status s = PlanConfig(cfg, &sample, out, &report);
  if (file.is_open()) file.close();
  if (sample.trainers > 0) {
    std::cerr << "actorrec plan: config " << cfg.path << ": " << sample.trainers << " trainer(s), "
              << sample.schema.tables.size() << " tables, batch " << cfg.training.batch_size
              << ", training.cache_rows " << cfg.training.cache_rows << " slots per trainer, mode "
              << config::ModeName(cfg.training.mode)
              << (cfg.training.mode == config::Mode::kReplicated ? " (no private rows)" : "") << "\n";
  }
  if (!report.lookahead_report.empty()) std::cerr << "actorrec plan: " << report.lookahead_report << "\n";
  if (!s.ok()) {
    if (report.capacity_error) {
      return Fail(kExitUsage, s.message() + "\nthe cache is training.cache_rows = " +
                                  std::to_string(cfg.training.cache_rows) +
                                  " slots per trainer: raise training.cache_rows to the capacity named above" +
                                  (cfg.training.lookahead > 0 ? ", or lower training.lookahead" : ""));
    }
    return Fail(s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure, s.message());
  }
  if (file.is_open() || flags.out != "-") {
    if (!file) return Fail(kExitFailure, "writing " + flags.out + " failed");
  }
  const uint64_t lines = report.batches * (flags.trainer ? 1 : sample.trainers);
  std::cerr << "actorrec plan: wrote " << lines << " line(s), " << report.batches << " batch(es)"
            << (flags.trainer ? " of trainer " + std::to_string(*flags.trainer) : std::string(" of every trainer"))
            << ", to " << (flags.out == "-" ? std::string("stdout") : flags.out) << "\n"
            << "actorrec plan: " << report.stats.Summary() << "\n";
  if (report.batches < flags.batches) {
    std::cerr << "actorrec plan: the data ended after " << report.batches << " batch(es)\n";
  }
  return kExitOk;
}

}  // namespace

std::function<int()> AddPlanCommand(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  auto* plan = app.add_subcommand("plan",
                                  "Write the oracle's plans for the first batches of a config as JSON lines: which "
                                  "rows each trainer prefetches, syncs and evicts, and its features as cache slots.");
  plan->footer(kFields);
  plan->add_option("--config,-c", flags->config.path,
                   "TOML config (see configs/); default: the embedded configs/local.toml")
      ->check(CLI::ExistingFile);
  AddSetFlag(plan, &flags->config);
  plan->add_option("--batches,-n", flags->batches, "how many batches to plan (default 10)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  plan->add_option("--out,-o", flags->out,
                   "where the JSON lines go (with --calibrate: the fitted profile); - is stdout (default)");
  plan->add_option_function<uint32_t>(
      "--trainer,-t", [flags](const uint32_t& w) { flags->trainer = w; },
      "write only this trainer's plans (0-based); default: every trainer");
  plan->add_flag("--recommend", flags->recommend,
                 "instead of writing plans: plan --batches batches for candidate batch sizes, cache sizes and "
                 "lookaheads, predict each one's time on --hardware with the cost model (docs/planner.md), print the "
                 "best, every mode's predicted time at it and the dominating term");
  plan->add_option("--hardware", flags->hardware,
                   "hardware profile (TOML) for --recommend and --calibrate: `actorrec bench --profile` writes this "
                   "machine's")
      ->check(CLI::ExistingFile);
  plan->add_option("--calibrate", flags->calibrate,
                   "instead of writing plans: read these run directories' metrics.jsonl (runs of one config and "
                   "mode; the config: the first one's cluster.toml unless --config), fit the trainers' GEMM rate and "
                   "the spread of their compute to them, and write --hardware with trainer_gflops and "
                   "trainer_spread set to --out (docs/planner.md)")
      ->check(CLI::ExistingDirectory);
  plan->add_option("--warmup", flags->warmup,
                   "for --calibrate: batches left out at the start of each run (default 2, as the cluster bench)");
  plan->add_flag("--one-host", flags->one_host,
                 "for --recommend: every member of the topology runs on one host and shares its host_cores (the "
                 "network testbed); default: members at one address share a host");
  plan->callback([flags] {
    if (!flags->calibrate.empty() && flags->hardware.empty()) {
      throw CLI::ValidationError("--calibrate", "needs --hardware FILE: the profile whose links the runs used");
    }
    if (!flags->calibrate.empty() && flags->recommend) {
      throw CLI::ValidationError("--calibrate", "writes a profile; run --recommend with it afterwards");
    }
    if (flags->recommend && flags->hardware.empty()) {
      throw CLI::ValidationError("--recommend", "needs --hardware FILE (actorrec bench --profile measures one)");
    }
  });
  return [flags] { return RunPlan(*flags); };
}

}  // namespace actorrec
