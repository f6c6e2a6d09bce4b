// [run], [model], [optimizer], [dataset] and [training]; see sections.hpp.
#include "configs/sections.hpp"

#include <glob.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <map>
#include <cstdio>
#include <cstring>
#include <limits>

#include "configs/names.hpp"

namespace actorrec::config {

namespace {

constexpr int64_t kMaxInt = INT_MAX;
// Layer widths beyond this are a typo, not a model (and would overflow GEMM sizes).
constexpr int64_t kMaxLayerWidth = 65536;
// Row ids are 32-bit (data::RowId), so no table has more rows.
constexpr int64_t kMaxTableRows = UINT32_MAX;
// Cache slots are numbered in 32 bits, and static_hot takes twice
// training.cache_rows of them. What fits in memory is checked apart
// (memory_check.hpp).
constexpr int64_t kMaxCacheRows = INT32_MAX;
// training.devices: a CUDA device ordinal above this is a typo (the largest
// machines hold 16 GPUs; 255 leaves room without accepting garbage).
constexpr int64_t kMaxDeviceOrdinal = 255;

// Sets *out from an optional reading, keeping the default when absent or invalid.
template <class T, class U>
void Assign(const std::optional<U>& value, T* out) {
  if (value) *out = static_cast<T>(*value);
}

std::vector<int> ToInts(const std::vector<int64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

constexpr RealRange kPositive{0.0, /*min_open=*/true};
constexpr RealRange kNonNegative{0.0, /*min_open=*/false};
constexpr RealRange kUnitOpenRight{0.0, false, 1.0, /*max_open=*/true};  // [0, 1)
constexpr RealRange kUnitOpenLeft{0.0, true, 1.0, false};               // (0, 1]

// The tables the config itself counts (0: known only once the data is
// open; the dataset source checks dedup groups and crosses against the
// data's schema then).
size_t TablesNamedByConfig(const DatasetConfig& ds) {
  if (!ds.table_rows.empty()) return ds.table_rows.size();
  if (ds.source == "csv") return ds.csv.categorical.size();
  if (ds.source == "libfm") return static_cast<size_t>(ds.libfm.fields);
  return 0;
}

// A cross of more tables than this is a typo, not a feature (Cheng et al.
// cross two or three).
constexpr size_t kMaxCrossTables = 16;

// [[model.crosses]]: tables = [...] (two or more distinct tables) and
// buckets each; no two crosses of the same tables in the same order.
void ReadCrosses(TableReader& t, size_t tables, ModelConfig* model) {
  const std::vector<const toml::table*> crosses = t.TableArray("crosses");
  for (size_t i = 0; i < crosses.size(); ++i) {
    TableReader c(crosses[i], t.KeyPath("crosses") + "[" + std::to_string(i) + "]", t.problems());
    CrossConfig cross;
    bool valid = true;
    if (c.Require("tables", "the table indices (0-based) whose ids are crossed, e.g. tables = [0, 1]")) {
      if (auto list = c.IntArray("tables", 0, UINT32_MAX - 1, kMaxCrossTables)) {
        for (int64_t table : *list) {
          if (tables != 0 && static_cast<uint64_t>(table) >= tables) {
            c.Fail("tables", "table " + std::to_string(table) + " does not exist: the dataset has " +
                                 std::to_string(tables) + " tables, 0 to " + std::to_string(tables - 1));
            valid = false;
          } else if (std::find(cross.tables.begin(), cross.tables.end(), table) != cross.tables.end()) {
            c.Fail("tables", "table " + std::to_string(table) + " is listed twice: a cross combines different tables");
            valid = false;
          }
          cross.tables.push_back(static_cast<uint32_t>(table));
        }
        if (list->size() < 2) {
          c.Fail("tables", "expected at least two tables to cross; got " + std::to_string(list->size()) +
                               " (a table's own ids are in the wide part already)");
          valid = false;
        }
      } else {
        valid = false;
      }
    } else {
      valid = false;
    }
    if (c.Require("buckets", "the rows the crossed ids hash into, e.g. buckets = 100003")) {
      if (auto buckets = c.Int("buckets", 2, kMaxTableRows)) {
        cross.buckets = static_cast<uint64_t>(*buckets);
      } else {
        valid = false;
      }
    } else {
      valid = false;
    }
    for (size_t j = 0; valid && j < model->crosses.size(); ++j) {
      if (model->crosses[j].tables == cross.tables) {
        c.Fail("tables", "the same tables as " + t.KeyPath("crosses") + "[" + std::to_string(j) +
                             "]: each cross once (raise its buckets instead)");
        valid = false;
      }
    }
    if (valid) model->crosses.push_back(std::move(cross));
    static constexpr std::string_view kKeys[] = {"tables", "buckets"};
    c.Finish(kKeys);
  }
}

}  // namespace

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string ResolvePath(const std::filesystem::path& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (base_dir / p).lexically_normal().string();
}

bool ReadFileText(const std::string& path, std::string* text, std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = std::strerror(errno);
    return false;
  }
  text->clear();
  char buffer[1 << 14];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text->append(buffer, n);
  // A directory opens fine on Linux and fails on the first read (EISDIR).
  bool failed = std::ferror(file) != 0;
  int read_errno = errno;
  std::fclose(file);
  if (failed) {
    *error = std::strerror(read_errno);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- [run]

void ReadRun(TableReader& t, RunConfig* run) {
  if (auto name = t.String("name")) {
    if (IsValidName(*name)) {
      run->name = *name;
    } else {
      t.Fail("name", "expected 1 to 64 of the characters A-Z a-z 0-9 _ . - (it names the "
                     "output directory); got " + Quote(*name));
    }
  }
  Assign(t.Int("seed", 0), &run->seed);
  // Relative to the working directory, not to the file: outputs belong to the
  // run, not next to its config.
  Assign(t.String("output_dir"), &run->output_dir);
  if (run->output_dir.empty()) run->output_dir = "runs/" + run->name;
  if (auto level = t.Choice("log_level", kLogLevels)) run->log_level = kLogLevels[*level];
  if (auto address = t.String("inspect_address")) {
    const size_t colon = address->rfind(':');
    const std::string port = colon == std::string::npos ? "" : address->substr(colon + 1);
    if (*address == "off" ||
        (colon != std::string::npos && colon > 0 && !port.empty() && port.size() <= 5 &&
         port.find_first_not_of("0123456789") == std::string::npos && std::stoul(port) <= 65535)) {
      run->inspect_address = *address;
    } else {
      t.Fail("inspect_address", "expected HOST:PORT (e.g. \"127.0.0.1:8080\"; port 0: a free one) or \"off\"; got " +
                                    Quote(*address));
    }
  }
  static constexpr std::string_view kKeys[] = {"name", "seed", "output_dir", "log_level", "inspect_address"};
  t.Finish(kKeys);
}

// ---------------------------------------------------------------- [model]

void ReadModel(TableReader& t, const DatasetConfig& dataset, ModelConfig* model) {
  const int dense_features = dataset.dense_features;
  auto kind = t.Choice("kind", kModelKindNames);
  if (kind) model->kind = static_cast<ModelKind>(*kind);
  auto dim = t.Int("embedding_dim", 1, 1024);
  Assign(dim, &model->embedding_dim);
  if (auto pooling = t.Choice("pooling", kPoolings)) model->pooling = kPoolings[*pooling];

  // Which MLP keys apply depends on the kind; with an invalid kind, read
  // them all for their types and skip the rules that depend on it.
  const bool known = t.Has("kind") ? kind.has_value() : true;
  const bool dlrm = known && model->kind == ModelKind::kDlrm;
  const bool dcn = known && model->kind == ModelKind::kDcn;
  const std::string kind_text = "kind = " + Quote(ModelKindName(model->kind));

  auto read_mlp = [&](std::string_view key, std::vector<int>* out) {
    if (auto sizes = t.IntArray(key, 1, kMaxLayerWidth)) *out = ToInts(*sizes);
  };
  if (!known || dlrm) {
    // The bottom MLP reads the dense features: without any, DLRM has none.
    if (known && dense_features == 0) {
      t.NotApplicable("bottom_mlp",
                      "applies only with dense features; dataset.dense_features = 0, so DLRM has no bottom MLP "
                      "and its interaction pairs the embeddings alone");
    } else if (!known || t.Require("bottom_mlp", "required for " + kind_text + " with dense features "
                                                     "(dataset.dense_features = " + std::to_string(dense_features) +
                                                     "; e.g. bottom_mlp = [512, 256, 64, 16])")) {
      read_mlp("bottom_mlp", &model->bottom_mlp);
    }
    if (!known || t.Require("top_mlp", "required for " + kind_text + " (e.g. top_mlp = [512, 256, 1])")) {
      read_mlp("top_mlp", &model->top_mlp);
    }
  } else {
    t.NotApplicable("bottom_mlp", "applies only to kind = \"dlrm\"; this model is " + kind_text);
    t.NotApplicable("top_mlp", "applies only to kind = \"dlrm\"; this model is " + kind_text);
  }
  if (!known || !dlrm) {
    if (!known || t.Require("deep_mlp", "required for " + kind_text + " (e.g. deep_mlp = [256, 128, 1])")) {
      read_mlp("deep_mlp", &model->deep_mlp);
    }
  } else {
    t.NotApplicable("deep_mlp",
                    "applies only to kind = \"wide_deep\", \"deepfm\" or \"dcn\" (dlrm uses "
                    "bottom_mlp and top_mlp)");
  }
  if (!known || dcn) {
    if (!known || t.Require("cross_layers", "required for kind = \"dcn\" (e.g. cross_layers = 3)")) {
      Assign(t.Int("cross_layers", 1, 64), &model->cross_layers);
    }
  } else {
    t.NotApplicable("cross_layers", "applies only to kind = \"dcn\"; this model is " + kind_text);
  }
  if (!known || model->kind == ModelKind::kWideDeep) {
    if (auto wide_dense = t.Bool("wide_dense")) model->wide_dense = *wide_dense;
    if (known && model->wide_dense && dense_features == 0) {
      t.Fail("wide_dense", "needs dense features: dataset.dense_features is 0");
    }
  } else {
    t.NotApplicable("wide_dense", "applies only to kind = \"wide_deep\"; this model is " + kind_text);
  }
  if (!known || model->kind == ModelKind::kWideDeep) {
    ReadCrosses(t, TablesNamedByConfig(dataset), model);
  } else {
    t.NotApplicable("crosses", "applies only to kind = \"wide_deep\" (crossed columns of its wide part); this model "
                               "is " + kind_text);
  }

  // Shapes that must line up with the rest of the network.
  if (known && dlrm && dim && !model->bottom_mlp.empty() &&
      model->bottom_mlp.back() != model->embedding_dim) {
    t.Fail("bottom_mlp",
           "the last size must equal model.embedding_dim (" + std::to_string(*dim) +
               "), because the bottom MLP's output joins the embeddings in the interaction; got " +
               std::to_string(model->bottom_mlp.back()));
  }
  auto check_logit = [&](std::string_view key, const std::vector<int>& sizes) {
    if (!sizes.empty() && sizes.back() != 1) {
      t.Fail(key, "the last size must be 1 (the click logit); got " +
                      std::to_string(sizes.back()));
    }
  };
  check_logit("top_mlp", model->top_mlp);
  check_logit("deep_mlp", model->deep_mlp);

  static constexpr std::string_view kKeys[] = {"kind",    "embedding_dim", "bottom_mlp",
                                                "top_mlp", "deep_mlp",     "cross_layers",
                                                "wide_dense", "crosses", "pooling"};
  t.Finish(kKeys);
}

// ---------------------------------------------------------------- [optimizer]

void ReadOptimizer(TableReader& t, OptimizerConfig* opt) {
  // The Adam and Adagrad keys are accepted with any optimizer so that
  // switching optimizers is a one-line change.
  if (auto dense = t.Choice("dense", kDenseOptimizerNames)) {
    opt->dense = static_cast<DenseOptimizer>(*dense);
  }
  Assign(t.Real("dense_lr", kPositive), &opt->dense_lr);
  if (auto sparse = t.Choice("sparse", kSparseOptimizerNames)) {
    opt->sparse = static_cast<SparseOptimizer>(*sparse);
  }
  Assign(t.Real("sparse_lr", kPositive), &opt->sparse_lr);
  Assign(t.Real("beta1", kUnitOpenRight), &opt->beta1);
  Assign(t.Real("beta2", kUnitOpenRight), &opt->beta2);
  Assign(t.Real("eps", kPositive), &opt->eps);
  Assign(t.Real("initial_accumulator", kNonNegative), &opt->initial_accumulator);
  static constexpr std::string_view kKeys[] = {"dense", "dense_lr", "sparse", "sparse_lr",
                                               "beta1", "beta2",    "eps",    "initial_accumulator"};
  t.Finish(kKeys);
}

// ---------------------------------------------------------------- [dataset]

constexpr RealRange kProbability{0.0, false, 1.0, false};

void ReadGenerator(TableReader& t, GeneratorConfig* g) {
  if (auto skew = t.Choice("skew", kSkews)) g->skew = kSkews[*skew];
  Assign(t.Real("alpha", {0.0, true}), &g->alpha);
  Assign(t.Real("hot_fraction", {0.0, true, 1.0, false}), &g->hot_fraction);
  Assign(t.Real("hot_share", kProbability), &g->hot_share);
  Assign(t.Real("sigma", {0.0, true, 10.0, false}), &g->sigma);
  Assign(t.Real("lambda", {0.0, true}), &g->lambda);
  if (auto bag = t.Choice("bag", kBagLengths)) g->bag = kBagLengths[*bag];
  Assign(t.Int("bag_min", 0, 100000), &g->bag_min);
  Assign(t.Int("bag_max", 0, 100000), &g->bag_max);
  Assign(t.Real("bag_mean", {0.0, false, 500.0, false}), &g->bag_mean);
  if (g->bag_max < g->bag_min && t.Has("bag_max")) {
    t.Fail("bag_max", "must be >= bag_min (" + std::to_string(g->bag_min) + ")");
  }
  Assign(t.Bool("distinct_ids"), &g->distinct_ids);
  Assign(t.Int("session_length", 1, 1 << 20), &g->session_length);
  if (auto dup = t.RealOrArray("session_dup", kProbability)) g->session_dup = *dup;
  Assign(t.Real("session_dense_dup", kProbability), &g->session_dense_dup);
  Assign(t.Real("base_ctr", {0.0, true, 1.0, true}), &g->base_ctr);
  Assign(t.Real("signal", {0.0, false, 100.0, false}), &g->signal);
  Assign(t.Int("threads", 1, 256), &g->threads);
  static constexpr std::string_view kKeys[] = {
      "skew", "alpha", "hot_fraction", "hot_share", "sigma", "lambda", "bag", "bag_min", "bag_max",
      "bag_mean", "distinct_ids", "session_length", "session_dup", "session_dense_dup", "base_ctr", "signal",
      "threads"};
  t.Finish(kKeys);
}

void ReadCsv(TableReader& t, CsvConfig* c) {
  Assign(t.String("separator"), &c->separator);
  Assign(t.Bool("header"), &c->header);
  if (auto columns = t.StringArray("columns")) c->columns = *columns;
  if (!c->header && !t.Has("columns")) {
    t.Require("columns", "required when header = false (the name of every column, in order)");
  }
  if (t.Require("label", "required: the column holding the label")) Assign(t.String("label"), &c->label);
  if (t.Require("positive", "required: the label values that mean 1, e.g. positive = [\">50K\"]")) {
    Assign(t.StringArray("positive"), &c->positive);
  }
  if (t.Require("negative", "required: the label values that mean 0, e.g. negative = [\"<=50K\"]")) {
    Assign(t.StringArray("negative"), &c->negative);
  }
  Assign(t.StringArray("dense"), &c->dense);
  if (auto tr = t.Choice("dense_transform", kDenseTransforms)) c->dense_transform = kDenseTransforms[*tr];
  Assign(t.StringArray("categorical"), &c->categorical);
  if (c->dense.empty() && c->categorical.empty() && t.Has("label")) {
    t.Fail("label", "the schema names no dense and no categorical column; list them in dense = [...] and "
                    "categorical = [...]");
  }
  Assign(t.String("missing"), &c->missing);
  Assign(t.String("comment"), &c->comment);
  static constexpr std::string_view kKeys[] = {"separator", "header", "columns",     "label",   "positive", "negative",
                                               "dense",     "dense_transform", "categorical", "missing", "comment"};
  t.Finish(kKeys);
}

// A split's files: a path or an array of them, each resolved against the
// config's folder; a pattern with * ? or [ is expanded (sorted, as the shell
// does), and one that matches nothing is a problem naming it.
void ReadPaths(TableReader& t, std::string_view key, const std::filesystem::path& base_dir,
               std::vector<std::string>* out) {
  auto patterns = t.StringOrArray(key);
  if (!patterns) return;
  for (const std::string& pattern : *patterns) {
    const std::string resolved = ResolvePath(base_dir, pattern);
    if (resolved.find_first_of("*?[") == std::string::npos) {
      out->push_back(resolved);  // a plain name: a missing file is named when it is opened
      continue;
    }
    glob_t matches{};
    const int rc = glob(resolved.c_str(), 0, nullptr, &matches);
    if (rc == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) out->push_back(matches.gl_pathv[i]);
    } else {
      t.Fail(key, "no file matches " + Quote(pattern) + (resolved != pattern ? " (" + resolved + ")" : "") +
                      (rc == GLOB_NOMATCH ? "" : ": the folder cannot be read"));
    }
    globfree(&matches);
  }
}

void ReadLibfm(TableReader& t, LibfmConfig* l) {
  if (t.Require("fields", "required: the features of every line, one embedding table each (e.g. fields = 10)")) {
    Assign(t.Int("fields", 1, 4096), &l->fields);
  }
  Assign(t.Bool("field_ids"), &l->field_ids);
  static constexpr std::string_view kKeys[] = {"fields", "field_ids"};
  t.Finish(kKeys);
}

namespace {

// [[dataset.dedup_groups]]: tables = [...] each, no table in two groups.
// Read after the source's own tables, whose table count it checks against.
void ReadDedupGroups(TableReader& t, DatasetConfig* ds) {
  const size_t tables = TablesNamedByConfig(*ds);
  std::map<int64_t, size_t> group_of;  // table -> the first group listing it
  const std::vector<const toml::table*> groups = t.TableArray("dedup_groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    TableReader g(groups[i], t.KeyPath("dedup_groups") + "[" + std::to_string(i) + "]", t.problems());
    if (g.Require("tables", "the table indices (0-based) whose features repeat together, e.g. tables = [0, 1]")) {
      if (auto list = g.IntArray("tables", 0, UINT32_MAX - 1)) {
        std::vector<uint32_t> group;
        for (int64_t table : *list) {
          if (tables != 0 && static_cast<uint64_t>(table) >= tables) {
            g.Fail("tables", "table " + std::to_string(table) + " does not exist: the dataset has " +
                                 std::to_string(tables) + " tables, 0 to " + std::to_string(tables - 1));
            continue;
          }
          auto [at, fresh] = group_of.try_emplace(table, i);
          if (!fresh) {
            g.Fail("tables", "table " + std::to_string(table) + " is already in " +
                                 (at->second == i ? std::string("this group")
                                                  : "dataset.dedup_groups[" + std::to_string(at->second) + "]") +
                                 ": every table may be in one group only");
            continue;
          }
          group.push_back(static_cast<uint32_t>(table));
        }
        std::sort(group.begin(), group.end());
        ds->dedup_groups.push_back(std::move(group));
        if (auto dense = g.Bool("dense"); dense && *dense) {
          if (ds->dense_dedup_group >= 0) {
            g.Fail("dense", "the dense features are already in dataset.dedup_groups[" +
                                std::to_string(ds->dense_dedup_group) + "]: they may be in one group only");
          } else if (ds->dense_features == 0) {
            g.Fail("dense", "the dataset has no dense features (dataset.dense_features = 0)");
          } else {
            ds->dense_dedup_group = static_cast<int>(ds->dedup_groups.size() - 1);
          }
        }
      }
    }
    static constexpr std::string_view kKeys[] = {"tables", "dense"};
    g.Finish(kKeys);
  }
}

}  // namespace

void ReadDataset(TableReader& t, const std::filesystem::path& base_dir, DatasetConfig* ds) {
  auto source = t.Choice("source", kSources);
  if (source) ds->source = kSources[*source];
  const bool known = t.Has("source") ? source.has_value() : true;
  const bool generated = ds->source == "generated";

  Assign(t.Int("dense_features", 0, 4096), &ds->dense_features);
  if (auto policy = t.Choice("on_bad_record", kBadRecordPolicies)) {
    ds->on_bad_record = kBadRecordPolicies[*policy];
  }

  if (known && generated) {
    constexpr std::string_view kWhy =
        "applies only to datasets read from files (source other than \"generated\")";
    t.NotApplicable("path", kWhy);
    t.NotApplicable("eval_path", kWhy);
    t.NotApplicable("eval_fraction", "applies only to datasets read from files (generated data has eval_samples)");
  } else {
    if (!known || t.Require("path", "required for source = " + Quote(ds->source) +
                                        " (the training data, relative to this file)")) {
      ReadPaths(t, "path", base_dir, &ds->paths);
    }
    ReadPaths(t, "eval_path", base_dir, &ds->eval_paths);
    if (!ds->paths.empty()) ds->path = ds->paths.front();
    if (!ds->eval_paths.empty()) ds->eval_path = ds->eval_paths.front();
    Assign(t.Real("eval_fraction", kUnitOpenRight), &ds->eval_fraction);
    if (ds->eval_fraction > 0 && t.Has("eval_path")) {
      t.Fail("eval_fraction", "expected eval_path or eval_fraction, not both: eval_fraction holds out part of path "
                              "for evaluation when there is no eval_path");
    }
    if (known && ds->eval_fraction > 0 && ds->source == "actorrec") {
      t.Fail("eval_fraction", "does not apply to source = \"actorrec\": hold out when converting (`actorrec data "
                              "convert` with eval_fraction, once with --split train and once with --split eval) and "
                              "give the eval file as eval_path");
    }
    // One actorrec dataset is one file (a converted set of files is one
    // dataset already).
    if (known && ds->source == "actorrec") {
      for (const auto& [key, files] : {std::pair{"path", &ds->paths}, std::pair{"eval_path", &ds->eval_paths}}) {
        if (files->size() > 1) {
          t.Fail(key, "expected one file for source = \"actorrec\"; got " + std::to_string(files->size()) +
                          " (convert several text files into one dataset with `actorrec data convert`)");
        }
      }
    }
  }

  if (!known || generated) {
    auto preset = t.Choice("preset", kPresets);
    if (preset) ds->preset = kPresets[*preset];
    if (!known || t.Require("samples", "required for source = \"generated\" (e.g. samples = 262144)")) {
      Assign(t.Int("samples", 1), &ds->samples);
    }
    Assign(t.Int("eval_samples", 0), &ds->eval_samples);
    Assign(t.Real("row_scale", kUnitOpenLeft), &ds->row_scale);
    const bool custom = ds->preset == "custom";
    if (!known || (t.Has("preset") && !preset)) {
      t.IntArray("table_rows", 1, kMaxTableRows, 4096);  // types only
    } else if (custom) {
      if (t.Require("table_rows", "required for preset = \"custom\" (one row count per table, "
                                  "e.g. table_rows = [1000, 2000])")) {
        if (auto rows = t.IntArray("table_rows", 1, kMaxTableRows, 4096)) {
          ds->table_rows.assign(rows->begin(), rows->end());
        }
      }
    } else {
      t.NotApplicable("table_rows", "applies only to preset = \"custom\" (preset " +
                                        Quote(ds->preset) + " defines its own tables)");
    }
  } else {
    const std::string why = "applies only to source = \"generated\"; this dataset is source = " +
                            Quote(ds->source);
    for (std::string_view key : {"preset", "samples", "eval_samples", "row_scale"}) t.NotApplicable(key, why);
    // Pre-mapped binary sources carry row ids but not the table sizes.
    if (ds->source == "dlrm_binary" || ds->source == "torchrec_npy") {
      if (t.Require("table_rows", "required for source = " + Quote(ds->source) +
                                      ": the cardinality of every table, e.g. the 26 of Criteo")) {
        if (auto rows = t.IntArray("table_rows", 1, kMaxTableRows, 4096)) ds->table_rows.assign(rows->begin(), rows->end());
      }
    } else {
      t.NotApplicable("table_rows", why);
    }
  }
  if (known && !ds->raw_text()) {
    const std::string why = "applies only to raw text sources (criteo_tsv, avazu_csv, csv, libfm); this dataset is "
                            "source = " + Quote(ds->source);
    for (std::string_view key : {"categorical", "min_count", "hash_rows", "mapping_file"}) t.NotApplicable(key, why);
  } else {
    if (auto kind = t.Choice("categorical", kCategoricalMappings)) ds->categorical = kCategoricalMappings[*kind];
    Assign(t.Int("min_count", 1), &ds->min_count);
    Assign(t.Int("hash_rows", 2, UINT32_MAX), &ds->hash_rows);
    if (auto file = t.String("mapping_file")) ds->mapping_file = ResolvePath(base_dir, *file);
  }

  if (known && generated) {
    t.NotApplicable("shuffle", "applies only to datasets read from files (generated data comes in a random order "
                               "already)");
  } else {
    Assign(t.Bool("shuffle"), &ds->shuffle);
  }

  // A source's own sub-table: read when the source is `source` (or unknown,
  // for its types), refused under another source, required under it when
  // `required_hint` is given.
  auto source_table = [&](std::string_view key, std::string_view source, const char* required_hint, auto read) {
    TableReader sub = t.Table(key);
    if (sub.present()) {
      if (known && ds->source != source) {
        t.NotApplicable(key, "applies only to source = " + Quote(source));
      } else {
        read(sub);
      }
    } else if (known && ds->source == source && required_hint != nullptr) {
      t.Require(key, required_hint);
    }
  };
  source_table("generator", "generated", nullptr, [&](TableReader& sub) { ReadGenerator(sub, &ds->generator); });
  source_table("csv", "csv", "required for source = \"csv\": a [dataset.csv] table describing the columns",
               [&](TableReader& sub) { ReadCsv(sub, &ds->csv); });
  source_table("libfm", "libfm",
               "required for source = \"libfm\": a [dataset.libfm] table with fields = <features per line>",
               [&](TableReader& sub) { ReadLibfm(sub, &ds->libfm); });
  ReadDedupGroups(t, ds);
  if (known && ds->source == "libfm" && ds->dense_features != 0) {
    t.Fail("dense_features", "expected 0 for source = \"libfm\" (its features are categorical ids); got " +
                                 std::to_string(ds->dense_features) + (t.Has("dense_features") ? "" : " (the default)"));
  }
  static constexpr std::string_view kKeys[] = {
      "source",  "path",       "eval_path",  "eval_fraction", "preset",        "samples", "eval_samples",
      "dense_features", "table_rows", "row_scale", "on_bad_record", "categorical", "min_count",
      "hash_rows", "mapping_file", "shuffle", "generator", "csv", "libfm", "dedup_groups"};
  t.Finish(kKeys);
}

// ---------------------------------------------------------------- [training]

void ReadTraining(TableReader& t, TrainingConfig* tr) {
  if (auto mode = t.Choice("mode", kModeNames)) tr->mode = static_cast<Mode>(*mode);
  // Divisibility by the number of trainers is checked once the cluster is known.
  Assign(t.Int("batch_size", 1, kMaxInt), &tr->batch_size);
  Assign(t.Int("epochs", 1, kMaxInt), &tr->epochs);
  Assign(t.Int("max_batches", 0), &tr->max_batches);
  // Beyond 100000 batches the oracle's window alone would not fit in memory.
  Assign(t.Int("lookahead", 0, 100000), &tr->lookahead);
  Assign(t.Int("cache_rows", 1, kMaxCacheRows), &tr->cache_rows);
  Assign(t.Int("eval_every", 0), &tr->eval_every);
  if (auto backend = t.Choice("backend", kBackends)) tr->backend = kBackends[*backend];
  // Device ordinals as the CUDA runtime numbers them; whether each exists
  // is known only at start-up (gpu::AssignDevices).
  if (auto devices = t.IntArray("devices", 0, kMaxDeviceOrdinal, kMaxDeviceOrdinal + 1)) {
    for (size_t i = 0; i < devices->size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if ((*devices)[j] == (*devices)[i]) {
          t.Fail("devices", "device " + std::to_string((*devices)[i]) + " is listed twice (entries " +
                                std::to_string(j) + " and " + std::to_string(i) +
                                "); list each device once: trainers wrap round the list (the k-th on devices[k mod "
                                "size]), so more trainers than devices share them");
          devices.reset();
          break;
        }
      }
      if (!devices) break;
    }
    if (devices) tr->devices.assign(devices->begin(), devices->end());
  }
  Assign(t.String("metrics_file"), &tr->metrics_file);
  static constexpr std::string_view kKeys[] = {"mode",       "batch_size", "epochs",
                                               "max_batches", "lookahead", "cache_rows",
                                               "eval_every", "backend",   "devices",   "metrics_file"};
  t.Finish(kKeys);
}

}  // namespace actorrec::config
