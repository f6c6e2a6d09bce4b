#include "tools/predict_command.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "actors/common/exit_codes.hpp"
#include "actors/run/checkpoint.hpp"
#include "actors/run/run_parts.hpp"
#include "configs/config.hpp"
#include "tools/config_flags.hpp"

namespace actorrec {
namespace {

struct PredictFlags {
  ConfigFlags config;
  std::string checkpoint;
  std::string data;
  std::string out = "predictions.csv";
  uint64_t limit = 0;
};

int RunPredict(const PredictFlags& flags) {
  config::Config cfg;
  if (!LoadConfigFlags(flags.config, "predict", std::cerr, &cfg)) return kExitUsage;
  if (!flags.data.empty()) {
    if (cfg.dataset.source == "generated") {
      std::cerr << "actorrec predict: --data replaces dataset.eval_path of a file dataset; " << cfg.path
                << " generates its data (dataset.source = \"generated\"), so its eval split is scored instead: "
                   "leave --data out\n";
      return kExitUsage;
    }
    cfg.dataset.eval_path = flags.data;
    cfg.dataset.eval_paths = {flags.data};
    cfg.dataset.eval_fraction = 0;  // --data is the whole eval split
  } else if (cfg.dataset.source != "generated" && !cfg.dataset.has_eval()) {
    std::cerr << "actorrec predict: nothing to score: give --data FILE or set dataset.eval_path (or eval_fraction) in "
              << cfg.path << "\n";
    return kExitUsage;
  }
  auto parts = trainer::RunParts::Create(cfg);
  if (!parts.ok()) {
    std::cerr << "actorrec predict: " << parts.status().message() << "\n";
    return kExitUsage;
  }
  auto position = trainer::LoadRunCheckpoint(flags.checkpoint, parts->get());
  if (!position.ok()) {
    std::cerr << "actorrec predict: " << position.status().message() << "\n";
    return ExitCodeOf(position.status());
  }
  std::ofstream out(flags.out, std::ios::trunc);
  if (!out) {
    std::cerr << "actorrec predict: cannot write " << flags.out << "\n";
    return kExitUsage;
  }
  out << "label,probability\n";
  char line[64];
  uint64_t written = 0;
  trainer::RunParts& p = **parts;
  auto report = p.Evaluate(
      flags.limit,
      p.EachRow([&](uint32_t t, data::RowId r, float* row) {
        return p.shards[embedding::ShardOf(t, r, p.S())]->Peek(t, r, row);
      }),
      [&](const data::SampleBlock& block, const std::vector<float>& logits) {
        for (size_t i = 0; i < block.size(); ++i) {
          const double probability = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[i])));
          std::snprintf(line, sizeof line, "%g,%.9g\n", static_cast<double>(block.labels[i]), probability);
          out << line;
        }
        written += block.size();
        std::cerr << "\rscored " << written << " samples" << std::flush;
        return out ? Status::Ok() : Status::IoError("cannot write " + flags.out);
      });
  std::cerr << "\n";
  if (!report.ok()) {
    std::cerr << "actorrec predict: " << report.status().message() << "\n";
    return kExitFailure;
  }
  out.close();
  std::cout << "scored " << report->samples << " samples with the checkpoint after batch " << position->batches
            << " of " << flags.checkpoint << ": AUC " << report->auc << ", log-loss " << report->log_loss
            << ", accuracy " << report->accuracy << "\npredictions: " << flags.out << "\n";
  return kExitOk;
}

}  // namespace

std::function<int()> AddPredictCommand(CLI::App& app) {
  auto flags = std::make_shared<PredictFlags>();
  auto* predict = app.add_subcommand(
      "predict",
      "Score samples with a checkpoint's parameters: writes label,probability per sample as CSV and prints "
      "AUC, log-loss and accuracy.");
  predict->add_option("--config,-c", flags->config.path,
                      "the TOML config the checkpoint was trained with (default: the embedded configs/local.toml)")
      ->check(CLI::ExistingFile);
  AddSetFlag(predict, &flags->config);
  predict->add_option("--checkpoint", flags->checkpoint, "checkpoint directory (actorrec train --checkpoint-dir)")
      ->required()
      ->check(CLI::ExistingDirectory);
  predict->add_option("--data", flags->data,
                      "samples to score, in the config's dataset format (default: the config's eval split)");
  predict->add_option("--out,-o", flags->out, "the CSV to write (default predictions.csv)");
  predict->add_option("--limit", flags->limit, "score at most this many samples (0: all)");
  return [flags] { return RunPredict(*flags); };
}

}  // namespace actorrec
