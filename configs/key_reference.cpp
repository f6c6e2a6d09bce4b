#include "configs/key_reference.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string_view>
#include <type_traits>

#include "configs/config.hpp"
#include "configs/names.hpp"
#include "configs/toml_reader.hpp"

namespace actorrec::config {
namespace {

// Defaults, printed as TOML writes them, from a default-constructed Config:
// an absent key keeps the struct's initializer, so this is the default.
std::string Int(int64_t v) { return std::to_string(v); }
// The shortest text that reads back as v (0.9, not 0.90000000000000002).
std::string Real(double v) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  std::string out(buffer, end);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}
std::string Text(const std::string& v) { return v.empty() ? "(none)" : Quote(v); }
std::string Flag(bool v) { return v ? "true" : "false"; }
template <class T>
std::string List(const std::vector<T>& v) {
  if (v.empty()) return "(none)";
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      out += (i ? ", " : "") + Quote(v[i]);
    } else if constexpr (std::is_floating_point_v<T>) {
      out += (i ? ", " : "") + Real(v[i]);
    } else {
      out += (i ? ", " : "") + std::to_string(v[i]);
    }
  }
  return out + "]";
}

struct Meaning {
  std::string_view table, key;
  std::string (*default_of)(const Config&);
  std::string_view meaning;
};

// One line per key the loader accepts. A key added to a reader without a
// line here fails the test `config reference` (ReferenceProblems).
const Meaning kMeanings[] = {
    // [run]
    {"run", "name", [](const Config& c) { return Text(c.run.name); },
     "Names the run in logs and its output folder; [A-Za-z0-9_.-], 1 to 64 characters."},
    {"run", "seed", [](const Config& c) { return Int(static_cast<int64_t>(c.run.seed)); },
     "Seeds data generation, the epoch order and the weights: the same seed gives the same run, bit for bit."},
    {"run", "output_dir", [](const Config&) { return std::string("runs/<run.name>"); },
     "Where metrics, mappings and the like go; relative to the working directory, not to the file."},
    {"run", "log_level", [](const Config& c) { return Text(c.run.log_level); },
     "How much the log says; --log-level overrides it."},
    {"run", "inspect_address", [](const Config& c) { return Text(c.run.inspect_address); },
     "Where `train` serves the live inspector (web page, JSON, /metrics): HOST:PORT, port 0 a free one, or "
     "\"off\"; --inspect overrides it. An address other than loopback needs cluster.secret (the page then "
     "asks for a token derived from it)."},
    // [model]
    {"model", "kind", [](const Config& c) { return Text(ModelKindName(c.model.kind)); },
     "The model: DLRM, Wide&Deep, DeepFM or Deep&Cross v1 (equations: models/model.hpp)."},
    {"model", "embedding_dim", [](const Config& c) { return Int(c.model.embedding_dim); },
     "Floats per embedding row (Wide&Deep and DeepFM rows hold one more: the first-order weight)."},
    {"model", "pooling", [](const Config& c) { return Text(c.model.pooling); },
     "How the rows of a multi-valued feature combine into one vector."},
    {"model", "bottom_mlp", [](const Config& c) { return List(c.model.bottom_mlp); },
     "DLRM only: the widths of the MLP over the dense features; the last equals embedding_dim. Required with "
     "dense features; absent when dataset.dense_features = 0 (no bottom MLP: the interaction pairs the embeddings "
     "alone)."},
    {"model", "top_mlp", [](const Config& c) { return List(c.model.top_mlp); },
     "DLRM only, required: the widths of the MLP over the interaction; the last is 1 (the logit)."},
    {"model", "deep_mlp", [](const Config& c) { return List(c.model.deep_mlp); },
     "wide_deep, deepfm and dcn, required: the deep MLP's widths over [dense, embeddings]; the last is 1."},
    {"model", "cross_layers", [](const Config& c) { return Int(c.model.cross_layers); },
     "dcn only, required: the number of cross layers."},
    {"model", "wide_dense", [](const Config& c) { return Flag(c.model.wide_dense); },
     "wide_deep only: the dense features also enter the wide part, each with a weight (Cheng et al. 2016's "
     "wide part over raw features); false: the wide part sees the categorical ids only."},
    {"model", "crosses", [](const Config&) { return std::string("(none)"); },
     "wide_deep only: one [[model.crosses]] table per crossed-feature column of the wide part (below); none: the "
     "wide part has each table's own ids (and, with wide_dense, the dense features) only."},
    // [[model.crosses]]
    {"model.crosses", "tables", [](const Config&) { return std::string("(none)"); },
     "Required: 2 to 16 different table indices (0-based, as in dataset.dedup_groups) whose ids are crossed. A "
     "sample's cross id is a fixed hash of its ids in these tables, in this order, modulo buckets; multi-valued "
     "bags cross as their Cartesian product, an empty bag gives no cross id (docs/models.md). The cross is a "
     "wide-only table appended after the data's: one first-order weight per bucket, never seen by the deep part."},
    {"model.crosses", "buckets", [](const Config&) { return std::string("(none)"); },
     "Required: the cross's rows (hash buckets); crossed ids that collide share a weight. A bucket takes a whole "
     "embedding row (embedding_dim + 1 floats and their optimizer state), of which only the weight is used."},
    // [optimizer]
    {"optimizer", "dense", [](const Config& c) { return Text(std::string(kDenseOptimizerNames[static_cast<size_t>(c.optimizer.dense)])); },
     "The optimizer of the MLP weights."},
    {"optimizer", "dense_lr", [](const Config& c) { return Real(c.optimizer.dense_lr); },
     "The learning rate of the MLP weights."},
    {"optimizer", "sparse", [](const Config& c) { return Text(std::string(kSparseOptimizerNames[static_cast<size_t>(c.optimizer.sparse)])); },
     "The optimizer of embedding rows; its state travels with each row (adam is lazy: a row's moments advance only when it gets a gradient)."},
    {"optimizer", "sparse_lr", [](const Config& c) { return Real(c.optimizer.sparse_lr); },
     "The learning rate of embedding rows."},
    {"optimizer", "beta1", [](const Config& c) { return Real(c.optimizer.beta1); }, "Adam's first-moment decay."},
    {"optimizer", "beta2", [](const Config& c) { return Real(c.optimizer.beta2); }, "Adam's second-moment decay."},
    {"optimizer", "eps", [](const Config& c) { return Real(c.optimizer.eps); },
     "Added to the denominator of Adagrad and Adam (outside the square root, as PyTorch)."},
    {"optimizer", "initial_accumulator", [](const Config& c) { return Real(c.optimizer.initial_accumulator); },
     "The starting value of Adagrad's and row-wise Adagrad's accumulators."},
    // [dataset]
    {"dataset", "source", [](const Config& c) { return Text(c.dataset.source); },
     "Where samples come from: generated on the fly, a raw format (libfm: data/readers/libfm.hpp), or an actorrec file written by `data convert` / `data gen`."},
    {"dataset", "dense_features", [](const Config& c) { return Int(c.dataset.dense_features); },
     "Dense (continuous) features per sample; must match the data (Avazu has 0)."},
    {"dataset", "on_bad_record", [](const Config& c) { return Text(c.dataset.on_bad_record); },
     "A record that cannot be parsed stops the run naming file and line (fail), or is counted by reason and reported (skip)."},
    {"dataset", "path", [](const Config&) { return std::string("(none)"); },
     "Files only, required: the training data, relative to the config file: a path, a glob (day_*.gz: sorted) or an array of them, read in order as one stream; text may be gzip or zstd."},
    {"dataset", "eval_path", [](const Config&) { return std::string("(none)"); },
     "Files only: the held-out data (one or more files, as path) evaluated at the end and every training.eval_every batches; no evaluation without it."},
    {"dataset", "eval_fraction", [](const Config& c) { return Real(c.dataset.eval_fraction); },
     "Files without eval_path: hold out this fraction of path's samples for evaluation (training never sees them), by a fixed rule on each sample's position, the same for every run and seed."},
    {"dataset", "preset", [](const Config& c) { return Text(c.dataset.preset); },
     "Generated only: the tables' cardinalities and skew (Criteo Kaggle's 26 tables), or custom (table_rows)."},
    {"dataset", "samples", [](const Config& c) { return Int(static_cast<int64_t>(c.dataset.samples)); },
     "Generated only, required: training samples per epoch."},
    {"dataset", "eval_samples", [](const Config& c) { return Int(static_cast<int64_t>(c.dataset.eval_samples)); },
     "Generated only: held-out samples; their Bayes-optimal AUC is printed beside the model's."},
    {"dataset", "row_scale", [](const Config& c) { return Real(c.dataset.row_scale); },
     "Generated only: multiplies every preset table's row count (0.01 keeps tables small)."},
    {"dataset", "table_rows", [](const Config& c) { return List(c.dataset.table_rows); },
     "Rows of every table: required for preset = \"custom\" and for dlrm_binary and torchrec_npy (which carry ids, not sizes)."},
    {"dataset", "categorical", [](const Config& c) { return Text(c.dataset.categorical); },
     "Raw text only: categorical values become rows through a frequency-thresholded dictionary or hashing."},
    {"dataset", "min_count", [](const Config& c) { return Int(static_cast<int64_t>(c.dataset.min_count)); },
     "Dictionary: values seen fewer times in training share one rare row."},
    {"dataset", "hash_rows", [](const Config& c) { return Int(static_cast<int64_t>(c.dataset.hash_rows)); },
     "Hash: rows per table."},
    {"dataset", "mapping_file", [](const Config&) { return std::string("<run.output_dir>/<file name of path>.mapping"); },
     "Raw text only: the saved value-to-row mapping, reused so that the evaluation split maps like training."},
    {"dataset", "shuffle", [](const Config& c) { return Flag(c.dataset.shuffle); },
     "Files: read each training epoch in an order shuffled by run.seed and the epoch (actorrec files by chunks over a window; other files within windows of 131,072 samples); false: file order. Evaluation reads in file order."},
    {"dataset", "generator", [](const Config&) { return std::string("(none)"); },
     "Generated only: the [dataset.generator] table (below)."},
    {"dataset", "libfm", [](const Config&) { return std::string("(none)"); },
     "source = \"libfm\", required: the [dataset.libfm] table (below)."},
    {"dataset", "csv", [](const Config&) { return std::string("(none)"); },
     "source = \"csv\", required: the [dataset.csv] table describing the columns (below)."},
    {"dataset", "dedup_groups", [](const Config&) { return std::string("(none)"); },
     "One [[dataset.dedup_groups]] table per group of tables whose features repeat together (below); none: no dedup."},
    // [[dataset.dedup_groups]]
    {"dataset.dedup_groups", "tables", [](const Config&) { return std::string("(none)"); },
     "Required: table indices (0-based) deduplicated together, RecD's IKJT: each trainer pools a distinct bag tuple of "
     "the group once and expands it to its samples (e.g. a session's user features). A table in one group at most; "
     "the tables of a group must be all single-hot or all multi-hot. Bitwise equal across cache modes; against no "
     "dedup, equal up to the order of the gradient sums."},
    {"dataset.dedup_groups", "dense", [](const Config&) { return std::string("false"); },
     "The group's tuples include the dense features (a session's user features with its user's dense ones): DLRM's "
     "bottom MLP runs once per distinct (tuple, dense row) of a trainer's slice and its backward sums per tuple in "
     "ascending sample order. One group at most; model.kind = \"dlrm\" with dense features only."},
    // [dataset.generator]
    {"dataset.generator", "skew", [](const Config&) { return std::string("the preset's"); },
     "How often each row is drawn: Zipf, a hot set taking a share of accesses (Bagpipe's sweep), half-normal, exponential or uniform."},
    {"dataset.generator", "alpha", [](const Config& c) { return Real(c.dataset.generator.alpha); }, "zipf: the exponent."},
    {"dataset.generator", "hot_fraction", [](const Config& c) { return Real(c.dataset.generator.hot_fraction); },
     "top_share: the fraction of rows that is hot."},
    {"dataset.generator", "hot_share", [](const Config& c) { return Real(c.dataset.generator.hot_share); },
     "top_share: the share of accesses the hot rows take."},
    {"dataset.generator", "sigma", [](const Config& c) { return Real(c.dataset.generator.sigma); },
     "half_normal: the spread, as a fraction of the table."},
    {"dataset.generator", "lambda", [](const Config& c) { return Real(c.dataset.generator.lambda); },
     "exponential: the rate over the table's rows scaled to [0, 1)."},
    {"dataset.generator", "bag", [](const Config& c) { return Text(c.dataset.generator.bag); },
     "How many ids a sample has per table (multi-hot bags)."},
    {"dataset.generator", "bag_min", [](const Config& c) { return Int(c.dataset.generator.bag_min); },
     "fixed: the bag length; uniform: the shortest."},
    {"dataset.generator", "bag_max", [](const Config& c) { return Int(c.dataset.generator.bag_max); }, "uniform: the longest bag."},
    {"dataset.generator", "bag_mean", [](const Config& c) { return Real(c.dataset.generator.bag_mean); },
     "geometric and poisson: the mean bag length."},
    {"dataset.generator", "distinct_ids", [](const Config& c) { return Flag(c.dataset.generator.distinct_ids); },
     "No id repeats within one bag."},
    {"dataset.generator", "session_length", [](const Config& c) { return Int(c.dataset.generator.session_length); },
     "Samples per session (RecD): consecutive samples of a session may share features."},
    {"dataset.generator", "session_dup", [](const Config& c) { return List(c.dataset.generator.session_dup); },
     "The probability that a sample repeats its session's feature: one for every table, or one per table."},
    {"dataset.generator", "session_dense_dup", [](const Config& c) { return Real(c.dataset.generator.session_dense_dup); },
     "The probability that a sample repeats its session's dense features (a user's, with dedup_groups' dense)."},
    {"dataset.generator", "base_ctr", [](const Config& c) { return Real(c.dataset.generator.base_ctr); },
     "The labels' average click rate."},
    {"dataset.generator", "signal", [](const Config& c) { return Real(c.dataset.generator.signal); },
     "How strongly the hidden model's score decides the label (0: unlearnable labels)."},
    {"dataset.generator", "threads", [](const Config& c) { return Int(c.dataset.generator.threads); },
     "Generation threads; never changes the data."},
    // [dataset.csv]
    {"dataset.csv", "separator", [](const Config& c) { return Text(c.dataset.csv.separator); },
     "The field separator (\", \" for Adult: comma and space)."},
    {"dataset.csv", "header", [](const Config& c) { return Flag(c.dataset.csv.header); },
     "The first line names the columns."},
    {"dataset.csv", "columns", [](const Config& c) { return List(c.dataset.csv.columns); },
     "The name of every column, in order; required without a header."},
    {"dataset.csv", "label", [](const Config&) { return std::string("(none)"); }, "Required: the label column."},
    {"dataset.csv", "positive", [](const Config& c) { return List(c.dataset.csv.positive); },
     "Required: the label values that mean 1."},
    {"dataset.csv", "negative", [](const Config& c) { return List(c.dataset.csv.negative); },
     "Required: the label values that mean 0 (any other value is a bad record)."},
    {"dataset.csv", "dense", [](const Config& c) { return List(c.dataset.csv.dense); },
     "The dense (numeric) columns, in feature order; their count must equal dataset.dense_features."},
    {"dataset.csv", "dense_transform", [](const Config& c) { return Text(c.dataset.csv.dense_transform); },
     "Applied to every dense value (log1p for heavy-tailed counts)."},
    {"dataset.csv", "categorical", [](const Config& c) { return List(c.dataset.csv.categorical); },
     "The categorical columns, one embedding table each, in table order."},
    {"dataset.csv", "missing", [](const Config&) { return std::string("(none)"); },
     "A marker of a missing value besides the empty field (\"?\" in Adult)."},
    {"dataset.csv", "comment", [](const Config&) { return std::string("(none)"); },
     "Lines that start with it are not records."},
    // [dataset.libfm]
    {"dataset.libfm", "fields", [](const Config& c) { return Int(c.dataset.libfm.fields); },
     "Required: features per line, one embedding table each (Frappe: 10; MovieLens in the NFM paper: 3)."},
    {"dataset.libfm", "field_ids", [](const Config& c) { return Flag(c.dataset.libfm.field_ids); },
     "Features are field:feature:value (libffm) instead of feature:value, the k-th of a line being field k."},
    // [training]
    {"training", "mode", [](const Config& c) { return Text(ModeName(c.training.mode)); },
     "The cache and sync strategy; every mode gives the same parameters bit for bit (README: Models and modes)."},
    {"training", "batch_size", [](const Config& c) { return Int(c.training.batch_size); },
     "The global batch in samples, split evenly over all trainers (so a multiple of their number)."},
    {"training", "epochs", [](const Config& c) { return Int(c.training.epochs); }, "Passes over the training samples."},
    {"training", "max_batches", [](const Config& c) { return Int(static_cast<int64_t>(c.training.max_batches)); },
     "Stop after this many batches; 0 runs every epoch to the end."},
    {"training", "lookahead", [](const Config& c) { return Int(c.training.lookahead); },
     "Future batches the oracle inspects; 0 picks the largest that cache_rows allows (and ends a window early when a later batch needs it)."},
    {"training", "cache_rows", [](const Config& c) { return Int(static_cast<int64_t>(c.training.cache_rows)); },
     "Embedding rows cached per trainer (slots); checked against this machine's memory."},
    {"training", "eval_every", [](const Config& c) { return Int(static_cast<int64_t>(c.training.eval_every)); },
     "Batches between evaluations; 0 evaluates once, at the end."},
    {"training", "backend", [](const Config& c) { return Text(c.training.backend); },
     "The compute backend: auto uses a usable CUDA GPU, else the CPU; cuda without one is an error naming the reason."},
    {"training", "devices", [](const Config&) { return std::string("every device, round-robin"); },
     "CUDA backend: the devices of a process's trainers, its k-th trainer on devices[k mod size] (e.g. [0, 1]); each listed once and seen by the process (CUDA_VISIBLE_DEVICES numbers them from 0). Without it, trainer k on device k mod the devices the process sees. Trainers each on a device of their own can sum over NCCL (cluster.collective); trainers sharing one run as stream sets on it. Unused on the CPU."},
    {"training", "metrics_file", [](const Config&) { return std::string("<run.output_dir>/metrics.jsonl"); },
     "One JSON object per line: each batch, evaluation and the summary."},
    // [cluster]
    {"cluster", "secret", [](const Config&) { return std::string("(none)"); },
     "At least 16 characters, known to every member: keys the TLS between members and the join's proof. Give this or secret_file."},
    {"cluster", "secret_file", [](const Config&) { return std::string("(none)"); },
     "A file holding the secret (so that it is not committed with the config); relative to the config file."},
    {"cluster", "coordinator", [](const Config&) { return std::string("the oracle's member"); },
     "The member that hosts the supervisor and inspector, drives the run and writes metrics; the others connect to it."},
    {"cluster", "heartbeat_ms", [](const Config& c) { return Int(c.cluster.heartbeat_ms); },
     "How often members ping each other."},
    {"cluster", "peer_timeout_ms", [](const Config& c) { return Int(c.cluster.peer_timeout_ms); },
     "Silence after which a member counts as lost (at least 3 heartbeats)."},
    {"cluster", "join_timeout_ms", [](const Config& c) { return Int(c.cluster.join_timeout_ms); },
     "How long start-up waits for every member to join."},
    {"cluster", "collective", [](const Config& c) { return Text(c.cluster.collective); },
     "How trainer processes sum gradients: tls (mutual TLS keyed by the secret), gloo (plain TCP), nccl (between GPUs: every trainer runs the CUDA backend on a device of its own, else refused naming the reason and the devices) or auto (nccl where every trainer rank can, else tls). gloo and nccl are unauthenticated: a trusted network only, and they log a warning. Same bits every way. Trainers of one process sum through shared memory, or over NCCL with nccl or auto when each is on a GPU of its own (training.devices)."},
    {"cluster", "max_restarts", [](const Config& c) { return Int(c.cluster.max_restarts); },
     "Above 0, `actorrec node` runs its member in a worker process and restarts it when it dies (SIGKILL, a crash), at most this many times; the cluster then resumes from its newest snapshot and ends with the same parameters. 0: a lost member ends the run (exit 3)."},
    {"cluster", "restart_backoff_ms", [](const Config& c) { return Int(c.cluster.restart_backoff_ms); },
     "Wait before restarting a worker that died, doubled for each further crash (at most 10 s); a worker that lost a peer rejoins after this wait."},
    {"cluster", "snapshot_every", [](const Config& c) { return Int(c.cluster.snapshot_every); },
     "With max_restarts above 0 and no --checkpoint-every: batches between the snapshots a recovery resumes from (in --checkpoint-dir, else in memory: each member's agent keeps its member's pieces and a copy of the previous member's shard files)."},
    {"cluster", "member", [](const Config&) { return std::string("(none)"); },
     "Required: one [[cluster.member]] table per process (below)."},
    // [[cluster.member]]
    {"cluster.member", "name", [](const Config&) { return std::string("(none)"); },
     "Required, unique: the member's name (`actorrec node --member NAME`)."},
    {"cluster.member", "address", [](const Config&) { return std::string("(none)"); },
     "Required: the IP address or host name it listens on and is reached at."},
    {"cluster.member", "port", [](const Config&) { return Int(Member{}.port); },
     "Its port; 0 (any free port) only for a member nobody connects to."},
    {"cluster.member", "roles", [](const Config&) { return std::string("(none)"); },
     "Required: which of sampler, oracle, embedding, trainer it hosts (all: every one), or [\"spare\"] alone: no roles until it takes over those of a member that has not rejoined within half of join_timeout_ms after a loss (needs max_restarts above 0; docs/cluster.md)."},
    {"cluster.member", "trainers", [](const Config&) { return std::string("1 with the trainer role"); },
     "Trainer ranks it hosts (each takes an equal slice of every batch)."},
    {"cluster.member", "embedding_shards", [](const Config&) { return std::string("1 with the embedding role"); },
     "Embedding shards it hosts."},
};

// Documents that reach every branch of the readers: the embedded default
// (a real config), and one whose model kind and dataset source are unknown,
// which the readers answer by reading every key of those tables for their
// types, with the sub-tables present (the CSV keys that are read only when
// given, given) and a cluster of one member without roles.
constexpr std::string_view kEveryBranch = R"(
[run]
[model]
kind = "?"
[[model.crosses]]
tables = [0, 1]
buckets = 2
[optimizer]
[dataset]
source = "?"
[dataset.generator]
[dataset.libfm]
fields = 1
[dataset.csv]
label = "?"
positive = ["?"]
negative = ["?"]
[[dataset.dedup_groups]]
tables = [0]
[training]
[cluster]
[[cluster.member]]
)";

struct Recorded {
  std::vector<std::pair<std::string, std::string>> known;  // (table, key), first-seen order
  std::map<std::pair<std::string, std::string>, std::string> type;
};

Recorded Record() {
  Recorded out;
  KeyRecording recording;
  for (std::string_view text : {EmbeddedLocalToml(), kEveryBranch}) {
    try {
      ParseConfig(text, "");
    } catch (const ConfigError&) {
      // The second document is invalid on purpose: only what was read counts.
    }
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const RecordedKey& k : recording.known()) {
    if (seen.insert({k.table, k.key}).second) out.known.emplace_back(k.table, k.key);
  }
  for (const RecordedKey& k : recording.asked()) out.type.emplace(std::make_pair(k.table, k.key), k.type);
  return out;
}

// The tables in the order a config file has them.
int TableRank(const std::string& table) {
  static constexpr std::string_view kOrder[] = {"run",     "model",    "model.crosses", "optimizer",         "dataset",
                                                "dataset.generator", "dataset.csv", "dataset.libfm", "dataset.dedup_groups", "training", "cluster",
                                                "cluster.member"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (kOrder[i] == table) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kOrder));
}

const Meaning* MeaningOf(const std::string& table, const std::string& key) {
  for (const Meaning& m : kMeanings) {
    if (m.table == table && m.key == key) return &m;
  }
  return nullptr;
}

}  // namespace

std::vector<KeyReference> ConfigKeyReference() {
  const Recorded recorded = Record();
  const Config defaults;
  std::vector<KeyReference> out;
  for (const auto& [table, key] : recorded.known) {
    if (table.empty()) continue;  // the root's known keys are the tables themselves
    KeyReference r;
    r.table = table;
    r.key = key;
    auto type = recorded.type.find({table, key});
    r.type = type == recorded.type.end() ? "" : type->second;
    if (const Meaning* m = MeaningOf(table, key)) {
      r.default_value = m->default_of(defaults);
      r.meaning = m->meaning;
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KeyReference& a, const KeyReference& b) { return TableRank(a.table) < TableRank(b.table); });
  return out;
}

std::vector<std::string> ReferenceProblems() {
  std::vector<std::string> problems;
  std::set<std::pair<std::string, std::string>> accepted;
  for (const KeyReference& r : ConfigKeyReference()) {
    accepted.insert({r.table, r.key});
    const std::string name = r.table + "." + r.key;
    if (r.meaning.empty()) {
      problems.push_back(name + ": accepted by the loader but has no meaning in configs/key_reference.cpp");
    }
    if (r.type.empty()) {
      problems.push_back(name + ": no reader was seen to read it: make a document in configs/key_reference.cpp "
                                "reach the branch that reads it");
    }
  }
  for (const Meaning& m : kMeanings) {
    if (accepted.count({std::string(m.table), std::string(m.key)}) == 0) {
      problems.push_back(std::string(m.table) + "." + std::string(m.key) +
                         ": has a meaning in configs/key_reference.cpp but the loader does not accept it");
    }
  }
  return problems;
}

std::string ConfigReferenceMarkdown() {
  std::string out =
      "# Config reference\n\n"
      "Every key `actorrec` accepts, generated by `actorrec config reference` from the config loader itself: the\n"
      "types and ranges are the ones it checks, the defaults those of an absent key. A test fails when this page\n"
      "and the loader disagree. Relative paths in a file resolve against the file's folder (outputs against the\n"
      "working directory); `--set table.key=value` overrides any key for one run, and `--set table.key=`\n"
      "(nothing after the =) removes one, a table or an array of tables too, which then takes its default\n"
      "(`--set model.kind=dlrm --set model.deep_mlp= …` switches a Wide&Deep file to DLRM). `configs/local.toml`\n"
      "is a commented example.\n";
  std::string table;
  auto cell = [](std::string text) {
    std::string escaped;
    for (char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    return escaped;
  };
  for (const KeyReference& r : ConfigKeyReference()) {
    if (r.table != table) {
      table = r.table;
      const bool array = table == "cluster.member" || table == "dataset.dedup_groups" ||
                         table == "model.crosses";  // arrays of tables
      out += "\n## " + std::string(array ? "[[" : "[") + table + (array ? "]]" : "]") +
             "\n\n| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
    }
    out += "| `" + r.key + "` | " + cell(r.type) + " | " + cell(r.default_value) + " | " + cell(r.meaning) + " |\n";
  }
  return out;
}

}  // namespace actorrec::config
