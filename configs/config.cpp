// The config loader: parses TOML, runs the section readers, applies the
// checks that span sections, and turns the collected problems into one
// ConfigError. Also the small value helpers declared in config.hpp.
#include "configs/config.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <type_traits>

#include <toml++/toml.h>

#include "base/digest.hpp"
#include "base/status.hpp"
#include "configs/memory_check.hpp"
#include "configs/names.hpp"
#include "configs/sections.hpp"
#include "configs/toml_reader.hpp"

namespace actorrec::config {

// ---------------------------------------------------------------- values

std::string Problem::ToString() const {
  std::string out = file;
  if (line > 0) out += (out.empty() ? "line " : ":") + std::to_string(line);
  if (!out.empty()) out += ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

namespace {

std::string JoinProblems(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) {
    if (!out.empty()) out += '\n';
    out += p.ToString();
  }
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<Problem> problems)
    : std::runtime_error(JoinProblems(problems)), problems_(std::move(problems)) {}

// The name tables hold string literals, so data() is NUL-terminated.
const char* RoleName(Role r) { return kRoleNames[static_cast<size_t>(r)].data(); }
const char* ModelKindName(ModelKind k) { return kModelKindNames[static_cast<size_t>(k)].data(); }
const char* ModeName(Mode m) { return kModeNames[static_cast<size_t>(m)].data(); }

bool DatasetConfig::raw_text() const {
  return source == "criteo_tsv" || source == "avazu_csv" || source == "csv" || source == "libfm";
}

bool DatasetConfig::has_eval() const {
  return source == "generated" ? eval_samples > 0 : !eval_paths.empty() || eval_fraction > 0;
}

bool Member::Has(Role r) const { return std::find(roles.begin(), roles.end(), r) != roles.end(); }

int ClusterConfig::TotalTrainers() const {
  int total = 0;
  for (const Member& m : members) total += m.trainers;
  return total;
}

int ClusterConfig::TotalShards() const {
  int total = 0;
  for (const Member& m : members) total += m.embedding_shards;
  return total;
}

const Member* ClusterConfig::Find(std::string_view name) const {
  for (const Member& m : members) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const Member& ClusterConfig::Coordinator() const {
  const Member* m = Find(coordinator);
  ACTORREC_ASSERT(m != nullptr, "Coordinator() of a cluster that did not pass validation");
  return *m;
}

// ---------------------------------------------------------------- loading

namespace {

constexpr char kEmbeddedName[] = "<embedded local.toml>";

// Every trainer takes an equal, contiguous slice of the global batch
// (ARCHITECTURE §1), so the batch must split evenly.
void CheckBatchSplit(const Config& config, TableReader& training) {
  const int trainers = config.cluster.TotalTrainers();
  const int batch = config.training.batch_size;
  if (trainers <= 0 || batch % trainers == 0) return;
  const int below = batch / trainers * trainers, above = below + trainers;
  std::string fix = below > 0 ? "try " + std::to_string(below) + " or " + std::to_string(above)
                              : "try " + std::to_string(above);
  training.Fail("batch_size", "expected a multiple of the number of trainers in the cluster (" +
                                  std::to_string(trainers) +
                                  ", summed over all members) so that every trainer gets an equal "
                                  "slice; got " + std::to_string(batch) +
                                  (training.Has("batch_size") ? "" : " (the default)") + "; " + fix);
}

// One --set: its dotted key and the node that replaces the file's value,
// or none: "key=" removes the key (so it takes its default, or is absent).
struct Override {
  std::string arg;  // as given, for messages
  std::vector<std::string> key;
  std::unique_ptr<toml::node> value;  // null: remove the key
};

bool IsKeyPart(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Parses "dotted.key=value"; a problem (file "--set ARG") when malformed.
std::optional<Override> ParseOverride(const std::string& arg, std::vector<Problem>* problems) {
  auto fail = [&](std::string message) -> std::optional<Override> {
    problems->push_back(Problem{"--set " + arg, 0, "", std::move(message)});
    return std::nullopt;
  };
  const size_t eq = arg.find('=');
  if (eq == std::string::npos) return fail("expected key=value, e.g. --set training.batch_size=4096");
  Override o;
  o.arg = arg;
  const std::string_view key = std::string_view(arg).substr(0, eq);
  for (size_t at = 0;;) {
    const size_t dot = key.find('.', at);
    o.key.emplace_back(key.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (!IsKeyPart(o.key.back())) {
      return fail("the key must be a dotted name of letters, digits and _ (e.g. training.batch_size)");
    }
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  if (o.key.size() < 2) return fail("the key names its table too, e.g. training." + o.key[0]);
  const std::string value = arg.substr(eq + 1);
  if (value.empty()) return o;  // "key=": remove the key
  // A TOML value when the text parses as one; otherwise the text itself, so
  // that --set training.mode=lrpp needs no quotes.
  try {
    toml::table holder = toml::parse("v = " + value);
    if (toml::node* v = holder.get("v"); v != nullptr && holder.size() == 1) {
      v->visit([&](auto& node) { o.value = std::make_unique<std::remove_cvref_t<decltype(node)>>(std::move(node)); });
      return o;
    }
  } catch (const toml::parse_error&) {
  }
  o.value = std::make_unique<toml::value<std::string>>(value);
  return o;
}

// Puts each override into `root`, creating tables on the way, or removes
// its key. A key under a value or an array of tables (such as
// cluster.member) is a problem: members are set in the file; so is removing
// a key that is not there (a typo would do nothing silently).
void ApplyOverrides(toml::table* root, std::vector<Override>* overrides, std::vector<Problem>* problems) {
  for (Override& o : *overrides) {
    toml::table* table = root;
    std::string path;
    bool ok = true;
    auto absent = [&] {
      std::string key;
      for (const std::string& part : o.key) key += (key.empty() ? "" : ".") + part;
      problems->push_back(Problem{"--set " + o.arg, 0, "",
                                  key + " is not set, so there is nothing to remove (\"--set KEY=\" removes a key "
                                        "the config sets; give a value to set one)"});
      ok = false;
    };
    for (size_t i = 0; i + 1 < o.key.size() && ok; ++i) {
      path += (path.empty() ? "" : ".") + o.key[i];
      toml::node* next = table->get(o.key[i]);
      if (next == nullptr && !o.value) {
        absent();
      } else if (next == nullptr) {
        table = table->insert_or_assign(o.key[i], toml::table{}).first->second.as_table();
      } else if (next->is_table()) {
        table = next->as_table();
      } else {
        const bool members = next->is_array_of_tables();
        problems->push_back(Problem{"--set " + o.arg, 0, "",
                                    path + " is " + (members ? "an array of tables" : "a value") +
                                        ", not a table: --set reaches the keys of tables only" +
                                        (members ? " (change the [[" + path + "]] entries in the file)" : "")});
        ok = false;
      }
    }
    if (ok && !o.value) {
      if (table->erase(o.key.back()) == 0) absent();
    } else if (ok) {
      o.value->visit([&](auto& node) { table->insert_or_assign(o.key.back(), std::move(node)); });
    }
  }
}

// A problem about an overridden key names the --set, not a line of the file.
void AttributeToOverrides(const std::vector<Override>& overrides, std::vector<Problem>* problems) {
  for (Problem& p : *problems) {
    for (const Override& o : overrides) {
      std::string key;
      for (const std::string& part : o.key) key += (key.empty() ? "" : ".") + part;
      // The key itself, a key under it (an array's element), or a table the
      // --set created on its way.
      if (p.key == key || p.key.starts_with(key + ".") || p.key.starts_with(key + "[") ||
          (!p.key.empty() && key.starts_with(p.key + "."))) {
        p.file = "--set " + o.arg;
        p.line = 0;
      }
    }
  }
}

Config Parse(std::string_view text, const std::string& name, const std::filesystem::path& base_dir,
             const MemoryBudget& memory, std::span<const std::string> override_args = {}) {
  ProblemList problems(name);
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(name));
  } catch (const toml::parse_error& e) {
    // Nothing after a syntax error can be trusted, so stop here.
    problems.Add(static_cast<int>(e.source().begin.line), "",
                 "syntax error: " + std::string(e.description()));
    throw ConfigError(problems.Sorted());
  }
  std::vector<Problem> override_problems;
  std::vector<Override> overrides;
  for (const std::string& arg : override_args) {
    if (auto o = ParseOverride(arg, &override_problems)) overrides.push_back(std::move(*o));
  }
  ApplyOverrides(&root, &overrides, &override_problems);
  if (!override_problems.empty()) throw ConfigError(std::move(override_problems));

  Config config;
  config.path = name;
  std::string digested(text);
  for (const std::string& arg : override_args) digested.append("\n--set ").append(arg);
  config.digest = Digest64Hex(digested);
  config.overrides.assign(override_args.begin(), override_args.end());
  TableReader document(&root, "", &problems);
  TableReader run = document.Table("run");
  ReadRun(run, &config.run);
  // [dataset] before [model]: which model keys apply depends on its dense
  // features. Problems are reported in line order whatever the reading order.
  TableReader dataset = document.Table("dataset");
  ReadDataset(dataset, base_dir, &config.dataset);
  TableReader model = document.Table("model");
  ReadModel(model, config.dataset, &config.model);
  if (const int g = config.dataset.dense_dedup_group; g >= 0 && config.model.kind != ModelKind::kDlrm) {
    // Only DLRM's bottom MLP sees the dense features apart from the tables.
    const std::vector<const toml::table*> groups = dataset.TableArray("dedup_groups");
    TableReader group(groups.at(static_cast<size_t>(g)), dataset.KeyPath("dedup_groups") + "[" + std::to_string(g) + "]",
                      &problems);
    group.Fail("dense", std::string("only model.kind = \"dlrm\" computes per distinct tuple (its bottom MLP); \"") +
                            ModelKindName(config.model.kind) +
                            "\" reads every sample's dense features beside its embeddings: leave dense out");
  }
  TableReader optimizer = document.Table("optimizer");
  ReadOptimizer(optimizer, &config.optimizer);
  TableReader training = document.Table("training");
  ReadTraining(training, &config.training);
  TableReader cluster = document.Table("cluster");
  const bool trainers_known = ReadCluster(cluster, base_dir, &config.cluster);
  static constexpr std::string_view kTables[] = {"run",     "model",    "optimizer",
                                                 "dataset", "training", "cluster"};
  document.Finish(kTables);

  if (config.training.metrics_file.empty()) {
    config.training.metrics_file = config.run.output_dir + "/metrics.jsonl";
  }
  // The mapping belongs to the run's outputs, never beside the input data
  // (which may be read-only or shared).
  if (config.dataset.raw_text() && config.dataset.mapping_file.empty()) {
    config.dataset.mapping_file =
        config.run.output_dir + "/" + std::filesystem::path(config.dataset.path).filename().string() + ".mapping";
  }
  if (trainers_known) CheckBatchSplit(config, training);
  // Sizes against memory only once they are valid and consistent.
  if (problems.empty()) CheckMemory(config, {&model, &dataset, &training}, memory);

  if (!problems.empty()) {
    std::vector<Problem> sorted = problems.Sorted();
    AttributeToOverrides(overrides, &sorted);
    throw ConfigError(std::move(sorted));
  }
  return config;
}

std::filesystem::path DirectoryOf(const std::string& path) {
  return path.empty() ? std::filesystem::path() : std::filesystem::path(path).parent_path();
}

}  // namespace

Config LoadConfig(const std::string& path) {
  // An empty path names no file (LoadConfigWith would take the embedded
  // default): the read fails and says why.
  if (std::string text, error; path.empty() && !ReadFileText(path, &text, &error)) {
    throw ConfigError({Problem{path, 0, "", "cannot read the file: " + error}});
  }
  return LoadConfigWith(path, {});
}

Config ParseConfig(std::string_view toml_text, const std::string& path) {
  return Parse(toml_text, path, DirectoryOf(path), MachineMemory());
}

Config ParseConfig(std::string_view toml_text, const std::string& path, const MemoryBudget& memory) {
  return Parse(toml_text, path, DirectoryOf(path), memory);
}

Config LoadConfigWith(const std::string& path, std::span<const std::string> overrides) {
  // The embedded file has no directory: its paths resolve against the
  // working directory.
  if (path.empty()) return Parse(EmbeddedLocalToml(), kEmbeddedName, {}, MachineMemory(), overrides);
  std::string text, error;
  if (!ReadFileText(path, &text, &error)) {
    throw ConfigError({Problem{path, 0, "", "cannot read the file: " + error}});
  }
  return Parse(text, path, DirectoryOf(path), MachineMemory(), overrides);
}

Config LoadEmbeddedLocal() { return LoadConfigWith("", {}); }

}  // namespace actorrec::config
