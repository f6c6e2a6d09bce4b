// Config -> SampleReader for every dataset source.
#include "actors/sampler/dataset_source.hpp"

#include <filesystem>
#include <functional>

#include "data/crosses.hpp"
#include "data/format/dataset_file_reader.hpp"
#include "data/format/epoch_reader.hpp"
#include "data/gen/synthetic_generator.hpp"
#include "data/readers/avazu_csv.hpp"
#include "data/readers/categorical.hpp"
#include "data/readers/criteo_tsv.hpp"
#include "data/readers/csv_schema.hpp"
#include "data/readers/dlrm_binary_reader.hpp"
#include "data/readers/libfm.hpp"
#include "data/holdout.hpp"
#include "data/shuffle_window.hpp"
#include "data/readers/npy_triplet_reader.hpp"
#include "data/readers/text_reader.hpp"

namespace actorrec {
namespace {

using data::gen::AccessDistribution;
using data::gen::BagLength;

// The eval split of generated data is another sample stream of the same
// world (GeneratorOptions::stream): new samples, the same label model.
constexpr uint64_t kEvalStream = 0x5eed0e7a1ULL;

data::BadRecordPolicy PolicyOf(const config::DatasetConfig& ds) {
  return ds.on_bad_record == "skip" ? data::BadRecordPolicy::kSkip : data::BadRecordPolicy::kFail;
}

// The files of `split`, in reading order.
Result<std::vector<std::string>> SplitPaths(const config::DatasetConfig& ds, Split split) {
  if (split == Split::kTrain) return ds.paths;
  if (ds.eval_paths.empty()) {
    return Status::NotFound("dataset.eval_path is not set; add it to hold out an evaluation split");
  }
  return ds.eval_paths;
}

Result<std::unique_ptr<data::readers::TextFormat>> TextFormatOf(const config::DatasetConfig& ds) {
  namespace r = data::readers;
  if (ds.source == "criteo_tsv") return r::CriteoTsvFormat();
  if (ds.source == "avazu_csv") return r::AvazuCsvFormat();
  if (ds.source == "libfm") {
    return r::LibfmFormat({static_cast<size_t>(ds.libfm.fields), ds.libfm.field_ids});
  }
  const auto& c = ds.csv;
  r::CsvSchema s;
  s.separator = c.separator;
  s.has_header = c.header;
  s.column_names = c.columns;
  s.label_column = c.label;
  s.positive_labels = c.positive;
  s.negative_labels = c.negative;
  s.dense_columns = c.dense;
  s.dense_transform = c.dense_transform == "log1p" ? r::DenseTransform::kLog1p : r::DenseTransform::kNone;
  s.categorical_columns = c.categorical;
  s.missing_marker = c.missing;
  s.comment_prefix = c.comment;
  return r::CsvSchemaFormat(std::move(s));
}

// Loads the saved mapping, or builds it from the training file and saves it.
// A saved mapping must be the one this config and this training file would
// build: one from other data maps nearly every value to the rare row.
// The counting pass runs on `counting`'s threads (BuildMappingInParallel).
Result<std::shared_ptr<const data::readers::CategoricalMapping>> MappingOf(
    const config::DatasetConfig& ds, data::readers::TextFormat* format,
    const data::readers::CountingOptions& counting) {
  namespace r = data::readers;
  std::vector<r::TableMappingSpec> specs;
  for (const auto& name : format->table_names()) {
    r::TableMappingSpec spec;
    spec.name = name;
    spec.kind = ds.categorical == "hash" ? r::MappingKind::kHash : r::MappingKind::kDictionary;
    spec.hash_rows = ds.hash_rows;
    spec.min_count = ds.min_count;
    specs.push_back(spec);
  }
  if (std::filesystem::exists(ds.mapping_file)) {
    auto loaded = r::CategoricalMapping::Load(ds.mapping_file);
    if (!loaded.ok()) return loaded.status();
    auto files = r::IdentifyFiles(ds.paths);
    if (!files.ok()) return files.status();
    if (Status st = loaded->CheckBuiltFrom(specs, *files); !st.ok()) {
      return Status::InvalidArgument("dataset.mapping_file " + ds.mapping_file +
                                     " does not fit this dataset: " + st.message() + ". Delete it to rebuild it "
                                     "from dataset.path, or point dataset.mapping_file at another file");
    }
    return std::make_shared<const r::CategoricalMapping>(std::move(loaded.value()));
  }
  auto built = r::BuildMappingInParallel(ds.paths, [&ds] { return TextFormatOf(ds); }, std::move(specs),
                                         PolicyOf(ds), counting);
  if (!built.ok()) return built.status();
  std::filesystem::create_directories(std::filesystem::path(ds.mapping_file).parent_path().empty()
                                          ? std::filesystem::path(".")
                                          : std::filesystem::path(ds.mapping_file).parent_path());
  if (auto st = built->Save(ds.mapping_file); !st.ok()) return st;
  return std::make_shared<const r::CategoricalMapping>(std::move(built.value()));
}

AccessDistribution AccessOf(const config::GeneratorConfig& g) {
  if (g.skew == "zipf") return AccessDistribution::Zipf(g.alpha);
  if (g.skew == "top_share") return AccessDistribution::TopShare(g.hot_fraction, g.hot_share);
  if (g.skew == "half_normal") return AccessDistribution::HalfNormal(g.sigma);
  if (g.skew == "exponential") return AccessDistribution::Exponential(g.lambda);
  return AccessDistribution::Uniform();
}

BagLength BagOf(const config::GeneratorConfig& g) {
  if (g.bag == "uniform") return BagLength::Uniform(g.bag_min, g.bag_max);
  if (g.bag == "geometric") return BagLength::Geometric(g.bag_mean);
  if (g.bag == "poisson") return BagLength::Poisson(g.bag_mean);
  return BagLength::Fixed(g.bag_min);
}

}  // namespace

const char* SplitName(Split split) { return split == Split::kTrain ? "train" : "eval"; }

std::string SourceName(const config::Config& cfg, Split split) {
  if (cfg.dataset.source == "generated") return "the generated data";
  const auto& files = split == Split::kTrain ? cfg.dataset.paths : cfg.dataset.eval_paths;
  if (files.size() <= 1) return files.empty() ? std::string() : files.front();
  return files.front() + " and " + std::to_string(files.size() - 1) + " more file" + (files.size() > 2 ? "s" : "");
}

Status CheckSchema(const config::Config& cfg, const data::DatasetSchema& schema) {
  const auto& ds = cfg.dataset;
  const std::string data = SourceName(cfg, Split::kTrain);
  // The config counts the tables of some sources only: the rest are checked here.
  for (size_t g = 0; g < ds.dedup_groups.size(); ++g) {
    for (uint32_t t : ds.dedup_groups[g]) {
      if (t >= schema.num_tables()) {
        return Status::InvalidArgument("dataset.dedup_groups[" + std::to_string(g) + "].tables: table " +
                                       std::to_string(t) + " does not exist: " + data + " has " +
                                       std::to_string(schema.num_tables()) + " tables, 0 to " +
                                       std::to_string(schema.num_tables() - 1) +
                                       (cfg.path.empty() ? "" : " (in " + cfg.path + ")"));
      }
    }
  }
  if (schema.num_dense() == static_cast<size_t>(ds.dense_features)) return Status::Ok();
  return Status::InvalidArgument("dataset.dense_features is " + std::to_string(ds.dense_features) + ", but " + data +
                                 " (source = \"" + ds.source + "\") has " + std::to_string(schema.num_dense()) +
                                 " dense features: set dataset.dense_features = " +
                                 std::to_string(schema.num_dense()) + (cfg.path.empty() ? "" : " in " + cfg.path) +
                                 " (the model's input width follows from it)");
}

Result<data::gen::GeneratorOptions> GeneratorOptionsOf(const config::Config& cfg, Split split) {
  const auto& ds = cfg.dataset;
  const auto& g = ds.generator;
  data::gen::GeneratorOptions o;
  if (ds.preset == "criteo-kaggle") {
    o = data::gen::CriteoKaggleOptions(ds.row_scale);
  } else {
    for (size_t t = 0; t < ds.table_rows.size(); ++t) {
      data::gen::TableOptions table;
      table.name = std::string("C").append(std::to_string(t + 1));  // append: GCC 12 -Wrestrict false positive on "C" + s
      table.rows = std::max<uint64_t>(2, static_cast<uint64_t>(ds.table_rows[t] * ds.row_scale));
      table.access = AccessDistribution::Zipf(1.05);
      o.tables.push_back(table);
    }
  }
  o.num_dense = static_cast<uint32_t>(ds.dense_features);
  o.samples = split == Split::kTrain ? ds.samples : ds.eval_samples;
  o.seed = cfg.run.seed;
  o.stream = split == Split::kTrain ? 0 : kEvalStream;
  o.session_length = static_cast<uint32_t>(g.session_length);
  o.session_dense_dup_prob = g.session_dense_dup;
  o.base_ctr = g.base_ctr;
  o.signal = g.signal;
  o.threads = static_cast<uint32_t>(g.threads);
  if (!g.session_dup.empty() && g.session_dup.size() != 1 && g.session_dup.size() != o.tables.size()) {
    return Status::InvalidArgument("dataset.generator.session_dup has " + std::to_string(g.session_dup.size()) +
                                   " values for " + std::to_string(o.tables.size()) +
                                   " tables; give one value, or one per table");
  }
  for (size_t t = 0; t < o.tables.size(); ++t) {
    auto& table = o.tables[t];
    if (!g.skew.empty()) table.access = AccessOf(g);
    table.bag = BagOf(g);
    table.distinct_ids = g.distinct_ids;
    if (!g.session_dup.empty()) table.session_dup_prob = g.session_dup[g.session_dup.size() == 1 ? 0 : t];
  }
  if (auto st = data::gen::Validate(o); !st.ok()) return st;
  return o;
}

namespace {

// Whether a generated split keeps the record its Bayes-optimal AUC is
// computed from (8 bytes a sample, up to GeneratorOptions::auc_sample_cap).
enum class BayesRecord { kKeep, kNone };

using FilesOpener =
    std::function<Result<std::unique_ptr<data::SampleReader>>(const std::vector<std::string>& paths)>;
using PieceOpener = std::function<Result<std::unique_ptr<data::SampleReader>>(const data::readers::TextPiece& piece)>;
// How a file source opens its files; text sources open pieces of them too.
struct SourceOpeners {
  FilesOpener files;
  PieceOpener piece;  // text sources only
};
Result<std::unique_ptr<data::SampleReader>> OpenFiles(const config::DatasetConfig& ds,
                                                      const std::vector<std::string>& paths);

Result<std::unique_ptr<data::SampleReader>> OpenSplit(const config::Config& cfg, Split split, BayesRecord record) {
  const auto& ds = cfg.dataset;
  using ReaderPtr = std::unique_ptr<data::SampleReader>;
  if (ds.source == "generated") {
    auto options = GeneratorOptionsOf(cfg, split);
    if (!options.ok()) return options.status();
    if (record == BayesRecord::kNone) options->auc_sample_cap = 0;
    if (options->samples == 0) {
      return Status::NotFound(std::string("dataset.") + (split == Split::kTrain ? "samples" : "eval_samples") +
                              " is 0: there is no " + SplitName(split) + " split to read");
    }
    auto gen = data::gen::SyntheticGenerator::Open(std::move(options.value()));
    if (!gen.ok()) return gen.status();
    return ReaderPtr(std::move(gen.value()));
  }
  // dataset.eval_fraction: both splits read the training files, each keeping
  // its side of the fixed hold-out rule (data/holdout.hpp).
  if (ds.eval_fraction > 0) {
    auto whole = OpenFiles(ds, ds.paths);
    if (!whole.ok()) return whole.status();
    return data::HoldOutSplit(std::move(whole).value(), ds.eval_fraction, split == Split::kEval);
  }
  auto paths = SplitPaths(ds, split);
  if (!paths.ok()) return paths.status();
  return OpenFiles(ds, *paths);
}

// How the configured file source opens a list of its files, as one stream
// in order. A text source's mapping is made here, once (loaded, or built
// from the training files and saved), and shared by every list it opens.
Result<SourceOpeners> FileSource(const config::DatasetConfig& ds,
                                 const data::readers::CountingOptions& counting = {}) {
  namespace r = data::readers;
  using ReaderPtr = std::unique_ptr<data::SampleReader>;
  const data::BadRecordPolicy policy = PolicyOf(ds);
  if (ds.source == "actorrec") {
    return SourceOpeners{FilesOpener([policy](const std::vector<std::string>& paths) -> Result<ReaderPtr> {
      auto file = data::format::DatasetFileReader::Open(paths.front(), policy);
      if (!file.ok()) return file.status();
      return ReaderPtr(std::move(file.value()));
    }), nullptr};
  }
  if (ds.source == "dlrm_binary") {
    r::DlrmBinaryOptions options;
    options.num_dense = static_cast<size_t>(ds.dense_features);
    options.table_rows = ds.table_rows;
    return SourceOpeners{FilesOpener([options, policy](const std::vector<std::string>& paths) -> Result<ReaderPtr> {
      return r::OpenDlrmBinary(paths, options, policy);
    }), nullptr};
  }
  if (ds.source == "torchrec_npy") {
    r::NpyTripletOptions options;
    options.table_rows = ds.table_rows;
    return SourceOpeners{FilesOpener([options, policy](const std::vector<std::string>& paths) -> Result<ReaderPtr> {
      std::vector<r::NpyDayFiles> days;
      for (const std::string& day : paths) days.push_back({day + "_dense.npy", day + "_sparse.npy", day + "_labels.npy"});
      return r::OpenNpyTriplets(days, options, policy);
    }), nullptr};
  }
  auto format = TextFormatOf(ds);
  if (!format.ok()) return format.status();
  auto mapping = MappingOf(ds, format->get(), counting);
  if (!mapping.ok()) return mapping.status();
  // A format serves one scan at a time: one per reader.
  auto open = [ds, mapping = mapping.value(), policy](auto inputs) -> Result<ReaderPtr> {
    auto format = TextFormatOf(ds);
    if (!format.ok()) return format.status();
    auto reader = r::TextReader::Open(std::move(inputs), std::move(format.value()), mapping, policy);
    if (!reader.ok()) return reader.status();
    return ReaderPtr(std::move(reader.value()));
  };
  return SourceOpeners{[open](const std::vector<std::string>& paths) { return open(paths); },
                       [open](const r::TextPiece& piece) { return open(std::vector<r::TextPiece>{piece}); }};
}

// The samples of `paths`, in order, as the configured file source reads them.
Result<std::unique_ptr<data::SampleReader>> OpenFiles(const config::DatasetConfig& ds,
                                                      const std::vector<std::string>& paths) {
  auto source = FileSource(ds);
  if (!source.ok()) return source.status();
  return source->files(paths);
}

// model.crosses' tables appended to `reader`'s (data/crosses.hpp).
Result<std::unique_ptr<data::SampleReader>> WithCrosses(const config::Config& cfg, Split split,
                                                        Result<std::unique_ptr<data::SampleReader>> reader) {
  if (!reader.ok() || cfg.model.crosses.empty()) return reader;
  return data::Crossed(std::move(reader).value(), CrossSpecsOf(cfg.model), SourceName(cfg, split));
}

}  // namespace

std::vector<data::CrossSpec> CrossSpecsOf(const config::ModelConfig& model) {
  std::vector<data::CrossSpec> specs;
  for (size_t c = 0; c < model.crosses.size(); ++c) {
    specs.push_back({model.crosses[c].tables, model.crosses[c].buckets, "model.crosses[" + std::to_string(c) + "]"});
  }
  return specs;
}

Result<std::unique_ptr<data::SampleReader>> OpenSourceSplit(const config::Config& cfg, Split split) {
  return OpenSplit(cfg, split, BayesRecord::kKeep);
}

Result<std::unique_ptr<data::SampleReader>> OpenDatasetSplit(const config::Config& cfg, Split split) {
  return WithCrosses(cfg, split, OpenSplit(cfg, split, BayesRecord::kKeep));
}

Result<SplitFiles> OpenSplitFiles(const config::Config& cfg, Split split,
                                  const data::readers::CountingOptions& counting) {
  const auto& ds = cfg.dataset;
  if (ds.source == "generated" || ds.source == "actorrec") {
    return Status::NotSupported("dataset.source = \"" + ds.source + "\" is not read file by file");
  }
  const bool hold_out = ds.eval_fraction > 0;
  auto paths = hold_out ? Result<std::vector<std::string>>(ds.paths) : SplitPaths(ds, split);
  if (!paths.ok()) return paths.status();
  auto source = FileSource(ds, counting);
  if (!source.ok()) return source.status();
  SplitFiles files;
  files.paths = std::move(paths).value();
  if (source->piece) {
    auto pieces = data::readers::SplitIntoPieces(files.paths, counting.piece_bytes);
    if (!pieces.ok()) return pieces.status();
    files.units = pieces->size();
    files.open = [open = source->piece, pieces = std::move(pieces).value()](size_t piece) { return open(pieces[piece]); };
  } else {
    files.units = files.paths.size();
    files.open = [open = source->files, paths = files.paths](size_t file) { return open({paths[file]}); };
  }
  if (hold_out) {
    files.filter = [fraction = ds.eval_fraction, eval = split == Split::kEval](std::unique_ptr<data::SampleReader> r) {
      return data::HoldOutSplit(std::move(r), fraction, eval);
    };
  }
  return files;
}

namespace {

Result<std::unique_ptr<data::SampleReader>> OpenSourceEpoch(const config::Config& cfg, Split split, uint32_t epoch) {
  // Training streams its epochs and never asks their Bayes AUC (evaluation
  // reports the eval split's): a generated epoch kept 8 bytes of every
  // sample it made, 16 kB a batch of 2048 and 128 MiB at the cap, for
  // nothing.
  if (cfg.dataset.source != "actorrec") {
    auto reader = OpenSplit(cfg, split, BayesRecord::kNone);
    // Files read as they are (text, binary days) shuffle within a bounded
    // window, seeded by run.seed and the epoch; generated data is random
    // already, and evaluation reads in file order.
    if (!reader.ok() || cfg.dataset.source == "generated" || !cfg.dataset.shuffle || split != Split::kTrain) {
      return reader;
    }
    const uint64_t seed = cfg.run.seed * 0x9e3779b97f4a7c15ULL + epoch;
    return data::ShuffleWindow(std::move(reader).value(), data::kDefaultShuffleWindow, seed);
  }
  auto paths = SplitPaths(cfg.dataset, split);
  if (!paths.ok()) return paths.status();
  auto dataset = data::format::Dataset::Open(paths->front());
  if (!dataset.ok()) return dataset.status();
  data::format::EpochOptions options;
  options.seed = cfg.run.seed;
  options.shuffle = cfg.dataset.shuffle && split == Split::kTrain;  // evaluation reads in file order
  options.batch_size = static_cast<uint64_t>(cfg.training.batch_size);
  return std::unique_ptr<data::SampleReader>(std::make_unique<data::format::EpochReader>(
      std::shared_ptr<const data::format::Dataset>(std::move(dataset.value())), options, epoch));
}

}  // namespace

Result<std::unique_ptr<data::SampleReader>> OpenEpoch(const config::Config& cfg, Split split, uint32_t epoch) {
  return WithCrosses(cfg, split, OpenSourceEpoch(cfg, split, epoch));
}

}  // namespace actorrec
