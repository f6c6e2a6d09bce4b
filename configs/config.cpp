// The config loader: parses TOML, runs the section readers, applies the
// checks that span sections, and turns the collected problems into one
// ConfigError. Also the small value helpers declared in config.hpp.
#include "configs/config.hpp"

#include <algorithm>
#include <filesystem>

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

Config Parse(std::string_view text, const std::string& name, const std::filesystem::path& base_dir,
             const MemoryBudget& memory) {
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

  Config config;
  config.path = name;
  config.digest = Digest64Hex(text);
  TableReader document(&root, "", &problems);
  TableReader run = document.Table("run");
  ReadRun(run, &config.run);
  TableReader model = document.Table("model");
  ReadModel(model, &config.model);
  TableReader optimizer = document.Table("optimizer");
  ReadOptimizer(optimizer, &config.optimizer);
  TableReader dataset = document.Table("dataset");
  ReadDataset(dataset, base_dir, &config.dataset);
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
  const bool raw_text = config.dataset.source == "criteo_tsv" || config.dataset.source == "avazu_csv" ||
                    config.dataset.source == "csv";
  if (raw_text && config.dataset.mapping_file.empty()) {
    config.dataset.mapping_file =
        config.run.output_dir + "/" + std::filesystem::path(config.dataset.path).filename().string() + ".mapping";
  }
  if (trainers_known) CheckBatchSplit(config, training);
  // Sizes against memory only once they are valid and consistent.
  if (problems.empty()) CheckMemory(config, {&model, &dataset, &training}, memory);

  if (!problems.empty()) throw ConfigError(problems.Sorted());
  return config;
}

std::filesystem::path DirectoryOf(const std::string& path) {
  return path.empty() ? std::filesystem::path() : std::filesystem::path(path).parent_path();
}

}  // namespace

Config LoadConfig(const std::string& path) {
  std::string text, error;
  if (!ReadFileText(path, &text, &error)) {
    throw ConfigError({Problem{path, 0, "", "cannot read the file: " + error}});
  }
  return Parse(text, path, DirectoryOf(path), MachineMemory());
}

Config ParseConfig(std::string_view toml_text, const std::string& path) {
  return Parse(toml_text, path, DirectoryOf(path), MachineMemory());
}

Config ParseConfig(std::string_view toml_text, const std::string& path, const MemoryBudget& memory) {
  return Parse(toml_text, path, DirectoryOf(path), memory);
}

Config LoadEmbeddedLocal() {
  // The embedded file has no directory: its paths resolve against the
  // working directory.
  return Parse(EmbeddedLocalToml(), kEmbeddedName, {}, MachineMemory());
}

}  // namespace actorrec::config
