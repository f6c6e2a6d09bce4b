// `actorrec data convert | gen | stats`.
#include "tools/data_command.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "actors/common/exit_codes.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "configs/config.hpp"
#include "data/bad_record_tally.hpp"
#include "data/format/convert.hpp"
#include "data/format/parallel_convert.hpp"
#include "data/format/dataset_file_reader.hpp"
#include "data/gen/criteo_text.hpp"
#include "data/gen/synthetic_generator.hpp"
#include "data/stats/dataset_stats.hpp"
#include "data/stats/stats_format.hpp"
#include "tools/config_flags.hpp"

namespace actorrec {
namespace {

struct DataFlags {
  ConfigFlags config;
  std::string out;
  std::string split = "train";
  uint64_t samples = 0;  // gen: overrides dataset.samples / eval_samples
  uint64_t seed = 0;
  std::string dataset_file;  // stats: an actorrec dataset instead of --config
  std::string json_out;      // stats: also write JSON here
  uint64_t batch_size = 0;   // stats: 0 = training.batch_size of the config, or 4096
  uint64_t max_samples = 0;
  unsigned threads = 0;  // convert: 0 = one per hardware thread
  uint64_t piece_mb = data::readers::kDefaultPieceBytes >> 20;  // convert: plain text files cut every this many MiB
  std::string format = "actorrec";  // gen: actorrec, or criteo_days
  uint32_t days = 24;               // gen --format criteo_days
};



void PrintProgress(const data::format::ConvertProgress& p) {
  std::cerr << "converting: " << p.files_written << "/" << p.files << " pieces written (" << p.files_parsed
            << " parsed), " << p.samples << " samples, " << p.seconds << " s\n";
}

// Converts the files of `split` on up to `threads` threads (ParallelConvert:
// the same bytes as one thread), a piece of a file each (a whole file, or
// `piece_bytes` of a plain text file). Nullopt when the source is not read
// file by file or is one piece: then the stream is converted on this thread.
std::optional<Result<data::format::ConvertReport>> ConvertFilesInParallel(const config::Config& cfg, Split split,
                                                                          const std::string& out, unsigned threads,
                                                                          uint64_t piece_bytes,
                                                                          uint64_t* input_bytes) {
  if (threads == 1) return std::nullopt;
  data::readers::CountingOptions counting;  // the dictionary's counting pass, when the mapping is built here
  counting.threads = threads;
  counting.piece_bytes = piece_bytes;
  counting.progress = [](size_t counted, size_t files, double seconds) {
    std::cerr << "counting categorical values: " << counted << "/" << files << " pieces, " << seconds << " s\n";
  };
  auto files = OpenSplitFiles(cfg, split, counting);
  if (!files.ok() && files.status().code() == Status::Code::kNotSupported) return std::nullopt;
  if (!files.ok()) return Result<data::format::ConvertReport>(files.status());
  if (files->units < 2) return std::nullopt;
  for (const auto& path : files->paths) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) *input_bytes += size;
  }
  data::format::ParallelConvertOptions options;
  options.convert.source_name = SourceName(cfg, split);
  options.threads = threads;
  options.filter = files->filter;
  options.progress = PrintProgress;
  return data::format::ParallelConvert(files->units, files->open, out, std::move(options));
}

// Streams `split` of the configured dataset into an actorrec dataset file.
int ConvertTo(const config::Config& cfg, Split split, const std::string& out, bool show_bayes_auc,
              unsigned threads = 1, uint64_t piece_bytes = data::readers::kDefaultPieceBytes) {
  const auto parent = std::filesystem::path(out).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  uint64_t input_bytes = 0;
  auto parallel = ConvertFilesInParallel(cfg, split, out, threads, piece_bytes, &input_bytes);
  std::unique_ptr<data::SampleReader> reader;
  if (!parallel) {
    auto opened = OpenSourceSplit(cfg, split);
    if (!opened.ok()) {
      std::cerr << "actorrec data: " << opened.status().message() << "\n";
      return kExitFailure;
    }
    reader = std::move(opened).value();
  }
  data::format::ConvertOptions options;
  options.source_name = SourceName(cfg, split);
  auto report = parallel ? std::move(*parallel) : data::format::Convert(*reader, out, options);
  if (!report.ok()) {
    std::cerr << "actorrec data: " << report.status().message() << "\n";
    return kExitFailure;
  }
  const double mb = report->bytes / 1e6;
  std::cout << "wrote " << out << ": " << report->samples << " samples, " << report->tables << " tables, "
            << report->dense << " dense features, " << mb << " MB in " << report->seconds << " s ("
            << (report->seconds > 0 ? report->samples / report->seconds : 0) << " samples/s";
  if (input_bytes > 0 && report->seconds > 0) {
    std::cout << ", " << input_bytes / 1e6 / report->seconds << " MB/s of input files";
  }
  std::cout << ")\n";
  std::cout << data::DescribeSkipped(report->bad_records);
  if (show_bayes_auc) {
    if (auto* gen = dynamic_cast<data::gen::SyntheticGenerator*>(reader.get())) {
      const double auc = gen->BayesAuc();
      if (!std::isnan(auc)) {
        std::cout << "Bayes-optimal AUC of the generated labels: " << auc << " (over " << gen->auc_samples()
                  << " samples): no model can score higher on this data\n";
      }
    }
  }
  return kExitOk;
}

// `data gen --format criteo_days`: days 0 … days−2 from the training stream,
// the last day from the evaluation stream (another seed of the same hidden
// model), each `per_day` samples, as gzipped Criteo TSV in `dir`.
int GenCriteoDays(const config::Config& cfg, const std::string& dir, uint32_t days, uint64_t per_day) {
  const auto fail = [](const Status& s) {
    std::cerr << "actorrec data gen: " << s.message() << "\n";
    return kExitFailure;
  };
  if (days < 2 || per_day == 0) {
    std::cerr << "actorrec data gen: --format criteo_days needs --days >= 2 and --samples (per day) > 0\n";
    return kExitUsage;
  }
  std::filesystem::create_directories(dir);
  for (Split split : {Split::kTrain, Split::kEval}) {
    auto options = GeneratorOptionsOf(cfg, split);
    if (!options.ok()) return fail(options.status());
    const uint32_t first = split == Split::kTrain ? 0 : days - 1;
    const uint32_t count = split == Split::kTrain ? days - 1 : 1;
    options->samples = per_day * count;
    auto gen = data::gen::SyntheticGenerator::Open(std::move(options).value());
    if (!gen.ok()) return fail(gen.status());
    for (uint32_t day = first; day < first + count; ++day) {
      const std::string path = (std::filesystem::path(dir) / ("day_" + std::to_string(day) + ".gz")).string();
      auto written = data::gen::WriteCriteoGzip(**gen, per_day, path);
      if (!written.ok()) return fail(written.status());
      std::cerr << "wrote " << path << ": " << *written << " samples\n";
    }
    if (split == Split::kEval) {
      const double auc = (*gen)->BayesAuc();
      if (!std::isnan(auc)) {
        std::cout << "Bayes-optimal AUC of day_" << days - 1 << " (the eval day): " << auc
                  << ": no model can score higher on it\n";
      }
    }
  }
  std::cout << "wrote day_0.gz … day_" << days - 1 << ".gz in " << dir << " (" << per_day << " samples each)\n";
  return kExitOk;
}

// Reads the dataset once and prints its skew and duplication; with a
// generated source, RecD's modelled DedupeFactor is printed beside the measured.
int Stats(const DataFlags& flags, const config::Config* cfg, Split split) {
  std::unique_ptr<data::SampleReader> reader;
  data::stats::StatsOptions options;
  options.batch_size = flags.batch_size;
  options.max_samples = flags.max_samples;
  if (!flags.dataset_file.empty()) {
    auto file = data::format::DatasetFileReader::Open(flags.dataset_file);
    if (!file.ok()) {
      std::cerr << "actorrec data stats: " << file.status().message() << "\n";
      return kExitFailure;
    }
    reader = std::move(file.value());
  } else {
    auto opened = OpenDatasetSplit(*cfg, split);
    if (!opened.ok()) {
      std::cerr << "actorrec data stats: " << opened.status().message() << "\n";
      return kExitFailure;
    }
    reader = std::move(opened.value());
    if (options.batch_size == 0) options.batch_size = static_cast<uint64_t>(cfg->training.batch_size);
    if (auto* gen = dynamic_cast<data::gen::SyntheticGenerator*>(reader.get())) {
      options.session_length = gen->options().session_length;
      options.session_dup_prob = gen->options().SessionDupProbs();
    }
  }
  if (options.batch_size == 0) options.batch_size = 4096;
  auto stats = data::stats::ComputeStats(*reader, options);
  if (!stats.ok()) {
    std::cerr << "actorrec data stats: " << stats.status().message() << "\n";
    return kExitFailure;
  }
  // Skipped records change every figure below: say so first.
  std::cout << data::DescribeSkipped(reader->bad_records());
  if (stats->samples == 0) {
    const std::string source = cfg != nullptr ? SourceName(*cfg, split) : flags.dataset_file;
    std::cerr << "actorrec data stats: " << data::NoSamples(source, reader->bad_records()).message() << "\n";
    return kExitFailure;
  }
  std::cout << data::stats::FormatTable(*stats);
  if (!flags.json_out.empty()) {
    std::ofstream out(flags.json_out);
    out << data::stats::ToJson(*stats) << "\n";
    if (!out) {
      std::cerr << "actorrec data stats: cannot write " << flags.json_out << "\n";
      return kExitFailure;
    }
    std::cout << "JSON written to " << flags.json_out << "\n";
  }
  return kExitOk;
}

Result<Split> SplitOf(const std::string& name) {
  if (name == "train") return Split::kTrain;
  if (name == "eval") return Split::kEval;
  return Status::InvalidArgument("--split " + name + " is not a split; use train or eval");
}

}  // namespace

std::function<int()> AddDataCommands(CLI::App& app) {
  auto flags = std::make_shared<DataFlags>();
  auto* data = app.add_subcommand("data", "Convert, generate and describe datasets.");
  data->require_subcommand(1);

  auto* convert = data->add_subcommand(
      "convert",
      "Read the dataset a config describes ([dataset]: Criteo TSV, Avazu CSV, schema CSV, DLRM binary, TorchRec "
      "NumPy, generated) and write it in actorrec's columnar format (checksummed, mmap-able).");
  convert->add_option("--config,-c", flags->config.path, "config whose [dataset] to read")->required();
  AddSetFlag(convert, &flags->config);
  convert->add_option("--out,-o", flags->out, "output dataset file")->required();
  convert->add_option("--split", flags->split, "train (dataset.path) or eval (dataset.eval_path)");
  convert->add_option("--threads,-j", flags->threads,
                      "threads parsing input at once, a file or a piece of a large plain text file each (default: "
                      "one per hardware thread); the output is the same bytes for any number");
  convert->add_option("--piece-mb", flags->piece_mb,
                      "cut plain (uncompressed) text files larger than this many MiB into pieces parsed in "
                      "parallel; compressed files are read whole (default 64)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));

  auto* gen = data->add_subcommand(
      "gen",
      "Generate a synthetic dataset ([dataset] with source = \"generated\": table sizes, skew, multi-hot bags, "
      "sessions; labels from a hidden model) into actorrec's format and report its Bayes-optimal AUC. Without "
      "--config: the embedded default (Criteo Kaggle tables at row_scale 0.01).");
  gen->add_option("--config,-c", flags->config.path, "config with a generated [dataset]");
  AddSetFlag(gen, &flags->config);
  gen->add_option("--out,-o", flags->out, "output dataset file")->required();
  gen->add_option("--split", flags->split, "train (dataset.samples) or eval (dataset.eval_samples)");
  gen->add_option("--samples,-n", flags->samples, "samples to generate (overrides the config)");
  auto* seed = gen->add_option("--seed", flags->seed, "generator seed (overrides run.seed)");
  gen->add_option("--format", flags->format,
                  "actorrec (one dataset file, the default) or criteo_days: gzipped Criteo TSV day files "
                  "day_0.gz … in the folder --out, the last day from the eval stream (the MLPerf DLRM Terabyte "
                  "layout: --days 24, days 0-22 train, day 23 eval); --samples is then per day")
      ->check(CLI::IsMember({"actorrec", "criteo_days"}));
  gen->add_option("--days", flags->days, "criteo_days: how many day files (default 24)");

  auto* stats = data->add_subcommand(
      "stats",
      "Describe a dataset: per table the distinct rows, the share of accesses of the top 0.1 % / 1 % of rows, "
      "unique rows per batch (coalescing), RecD's DedupeFactor (measured, and modelled for generated sessions) "
      "and the hit rate of a static top-k cache. Reads an actorrec dataset file, or the [dataset] of --config.");
  stats->add_option("dataset", flags->dataset_file, "actorrec dataset file (from data convert / gen)");
  stats->add_option("--config,-c", flags->config.path, "config whose [dataset] to read instead");
  AddSetFlag(stats, &flags->config);
  stats->add_option("--split", flags->split, "with --config: train or eval");
  stats->add_option("--batch-size,-b", flags->batch_size, "batch size for per-batch figures (default: the "
                                                           "config's training.batch_size, else 4096)");
  stats->add_option("--max-samples", flags->max_samples, "stop after this many samples (0 = all)");
  stats->add_option("--json", flags->json_out, "also write the figures as JSON to this file");

  return [=]() -> int {
    auto split = SplitOf(flags->split);
    if (!split.ok()) {
      std::cerr << "actorrec data: " << split.status().message() << "\n";
      return kExitUsage;
    }
    if (stats->parsed() && !flags->dataset_file.empty()) {
      if (!flags->config.path.empty()) {
        std::cerr << "actorrec data stats: give a dataset file or --config, not both\n";
        return kExitUsage;
      }
      return Stats(*flags, nullptr, *split);
    }
    config::Config cfg;
    if (!LoadConfigFlags(flags->config, "data", std::cerr, &cfg)) return kExitUsage;
    if (stats->parsed()) return Stats(*flags, &cfg, *split);
    if (convert->parsed()) return ConvertTo(cfg, *split, flags->out, /*show_bayes_auc=*/false, flags->threads,
                                          flags->piece_mb << 20);
    if (gen->parsed()) {
      if (cfg.dataset.source != "generated") {
        std::cerr << "actorrec data gen: " << cfg.path << " has dataset.source = \"" << cfg.dataset.source
                  << "\"; gen needs a generated dataset (use `data convert` for files)\n";
        return kExitUsage;
      }
      if (flags->samples > 0) (*split == Split::kTrain ? cfg.dataset.samples : cfg.dataset.eval_samples) = flags->samples;
      if (seed->count() > 0) cfg.run.seed = flags->seed;
      if (flags->format == "criteo_days") return GenCriteoDays(cfg, flags->out, flags->days, flags->samples);
      return ConvertTo(cfg, *split, flags->out, /*show_bayes_auc=*/true);
    }
    return kExitUsage;
  };
}

}  // namespace actorrec
