// Typed, validated configuration: run, model, optimizer, dataset, training
// and cluster topology, loaded from one TOML file.
//
// Loading checks every key: its type, its range, enumerated values, and the
// consistency of the topology. Any problem is a ConfigError whose message names
// the file, the line, the dotted key, what was expected and what was found,
// and says how to fix it. Keys the loader does not know are errors too (a
// typo must not silently fall back to a default). All errors of a file are
// reported together, one per line.
//
// Paths inside a file (dataset paths, secret_file) resolve against the
// directory of that file, so a config works from any working directory. The
// embedded default resolves against the working directory.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace actorrec::config {

// One problem found in a config file.
struct Problem {
  std::string file;     // the path as given, or "<embedded local.toml>"
  int line = 0;         // 1-based; 0 when the problem concerns the whole file
  std::string key;      // dotted key, e.g. "cluster.member[1].port"; empty for syntax errors
  std::string message;  // what was expected, what was found, how to fix it
  // "file:line: key: message" (parts that are empty are left out).
  std::string ToString() const;
};

// Thrown by LoadConfig / ParseConfig. what() lists every problem, one per line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

enum class Role { kSampler, kOracle, kEmbedding, kTrainer };
const char* RoleName(Role r);  // "sampler", "oracle", "embedding", "trainer"

enum class ModelKind { kDlrm, kWideDeep, kDeepFm, kDcn };
const char* ModelKindName(ModelKind k);  // "dlrm", "wide_deep", "deepfm", "dcn"

// ARCHITECTURE §8.
enum class Mode { kLrppDelayed, kLrpp, kReplicated, kNoCache, kStaticHot, kIdeal };
const char* ModeName(Mode m);  // "lrpp_delayed", "lrpp", "replicated", "no_cache", "static_hot", "ideal"

enum class DenseOptimizer { kSgd, kAdagrad, kAdam };
enum class SparseOptimizer { kSgd, kAdagrad, kRowwiseAdagrad, kAdam };

struct RunConfig {
  std::string name = "run";         // [A-Za-z0-9_.-]{1,64}
  uint64_t seed = 0;
  std::string output_dir;           // default "runs/<name>"
  std::string log_level = "info";   // trace | debug | info | warn | error
  // Where `train` serves the inspector (actors/inspector/inspector_service.hpp):
  // HOST:PORT (port 0: a free one), or "off".
  std::string inspect_address = "127.0.0.1:0";
};

// [[model.crosses]]: one crossed-feature column of Wide&Deep's wide part
// (Cheng et al. 2016): the tables crossed and the buckets their ids hash
// into (data/crosses.hpp states the hash and how bags cross).
struct CrossConfig {
  std::vector<uint32_t> tables;      // >= 2, distinct, 0-based table indices in the given order
  uint64_t buckets = 0;              // 2..2^32-1: rows of the cross's wide-only table
  bool operator==(const CrossConfig&) const = default;
};

struct ModelConfig {
  ModelKind kind = ModelKind::kDlrm;
  int embedding_dim = 16;            // 1..1024
  std::vector<int> bottom_mlp;       // dlrm: dense -> ...; last == embedding_dim; empty without dense
  std::vector<int> top_mlp;          // dlrm: interaction -> ...; last == 1
  std::vector<int> deep_mlp;         // wide_deep, deepfm, dcn: hidden sizes, last == 1
  int cross_layers = 0;              // dcn: >= 1
  bool wide_dense = false;           // wide_deep: the dense features enter the wide part too
  // wide_deep: crossed-feature columns, each a wide-only table appended after
  // the data's tables (one first-order weight per bucket; the deep part
  // never sees them).
  std::vector<CrossConfig> crosses;
  std::string pooling = "sum";       // sum | mean
};

struct OptimizerConfig {
  DenseOptimizer dense = DenseOptimizer::kSgd;
  double dense_lr = 0.01;            // > 0
  SparseOptimizer sparse = SparseOptimizer::kSgd;
  double sparse_lr = 0.01;           // > 0
  double beta1 = 0.9;                // adam, in [0, 1)
  double beta2 = 0.999;              // adam, in [0, 1)
  double eps = 1e-8;                 // adagrad / adam, > 0
  double initial_accumulator = 0.0;  // adagrad variants, >= 0
};

// [dataset.generator]: the synthetic data's shape beyond its tables
// (data/gen/generator_options.hpp says what each knob does).
struct GeneratorConfig {
  std::string skew;                  // "" = the preset's; zipf | top_share | half_normal | exponential | uniform
  double alpha = 1.05;               // zipf, > 0
  double hot_fraction = 0.01;        // top_share: (0, 1]
  double hot_share = 0.9;            // top_share: [0, 1]
  double sigma = 0.1;                // half_normal: (0, 10]
  double lambda = 10.0;              // exponential: > 0
  std::string bag = "fixed";         // fixed | uniform | geometric | poisson
  int bag_min = 1;                   // fixed / uniform
  int bag_max = 1;                   // uniform
  double bag_mean = 1.0;             // geometric (>= 1) / poisson
  bool distinct_ids = false;
  int session_length = 1;            // samples per session, >= 1
  std::vector<double> session_dup;   // one probability for every table, or one per table; empty = 0
  double session_dense_dup = 0.0;    // [0, 1]: a sample keeps the previous one's dense features (its session's)
  double base_ctr = 0.25;            // (0, 1)
  double signal = 1.0;               // >= 0; 0 = unlearnable labels
  int threads = 1;                   // generation threads; never changes the data
};

// [dataset.csv]: a delimited text file described column by column.
struct CsvConfig {
  std::string separator = ",";
  bool header = false;
  std::vector<std::string> columns;  // required without a header
  std::string label;                 // the label column
  std::vector<std::string> positive; // label values meaning 1
  std::vector<std::string> negative; // label values meaning 0
  std::vector<std::string> dense;
  std::string dense_transform = "none";  // none | log1p
  std::vector<std::string> categorical;
  std::string missing;               // a marker besides the empty field, e.g. "?"
  std::string comment;               // lines starting with it are not records
};

// [dataset.libfm]: the libFM text format (data/readers/libfm.hpp).
struct LibfmConfig {
  int fields = 0;                    // required: features per line, one table each
  bool field_ids = false;            // field:feature:value (libffm) instead of feature:value
};

struct DatasetConfig {
  // generated | criteo_tsv | avazu_csv | dlrm_binary | torchrec_npy | csv | libfm | actorrec
  std::string source = "generated";
  // The files of each split, resolved and with globs expanded (sorted), in
  // reading order; `path` and `eval_path` are the first of them (for names
  // and messages), empty when the split has no file.
  std::vector<std::string> paths;    // required unless source == generated
  std::vector<std::string> eval_paths;
  std::string path;
  std::string eval_path;
  // Without eval_path: hold out this fraction of the training files' samples
  // for evaluation, by a fixed rule on their position (data/holdout.hpp).
  double eval_fraction = 0.0;
  std::string preset = "criteo-kaggle";  // generated: criteo-kaggle | custom
  uint64_t samples = 0;              // generated: training samples, > 0
  uint64_t eval_samples = 0;         // generated: held-out samples
  int dense_features = 13;           // >= 0
  std::vector<uint64_t> table_rows;  // per table cardinality; required for preset custom
  double row_scale = 1.0;            // generated: multiply preset cardinalities, (0, 1]
  std::string on_bad_record = "fail";  // fail | skip
  bool shuffle = true;               // files: a seeded shuffled epoch order (actorrec: by chunks; others: within
                                     // windows of data::kDefaultShuffleWindow samples); false = file order
  // Raw text sources (criteo_tsv, avazu_csv, csv): categorical values to rows.
  std::string categorical = "dictionary";  // dictionary | hash
  uint64_t min_count = 1;            // dictionary: values seen fewer times share one "rare" row
  uint64_t hash_rows = 1000000;      // hash: rows per table (>= 2)
  std::string mapping_file;          // saved mapping; resolved; default "<output_dir>/<file name of path>.mapping"
  GeneratorConfig generator;
  CsvConfig csv;
  LibfmConfig libfm;
  // [[dataset.dedup_groups]]: tables whose features repeat together (e.g. a
  // session's user features), deduplicated together within each trainer's
  // slice (RecD's IKJT): pooled once per distinct bag tuple. Each entry's
  // table indices ascending; no table in two groups. Empty: no dedup.
  std::vector<std::vector<uint32_t>> dedup_groups;
  // The entry of dedup_groups whose tuples include the dense features
  // (`dense = true`): DLRM's bottom MLP runs once per distinct (tuple, dense
  // row) of a slice. -1: none.
  int dense_dedup_group = -1;

  // Raw text read line by line, whose categorical values become rows through
  // a mapping: criteo_tsv, avazu_csv, csv and libfm.
  bool raw_text() const;
  // Whether there is an evaluation split: eval_samples of generated data,
  // else eval_path or eval_fraction.
  bool has_eval() const;
};

struct TrainingConfig {
  Mode mode = Mode::kLrppDelayed;
  int batch_size = 2048;             // global batch; > 0, divisible by total trainers
  int epochs = 1;                    // >= 1
  uint64_t max_batches = 0;          // 0 = all batches of all epochs
  int lookahead = 0;                 // 0 = choose the largest that fits cache_rows
  uint64_t cache_rows = 65536;       // cache slots per trainer, > 0
  uint64_t eval_every = 0;           // batches between evaluations, 0 = at the end
  std::string backend = "auto";      // auto | cpu | cuda
  // CUDA devices of a process's trainers: its k-th trainer runs on
  // devices[k mod size] (gpu/device_assignment.hpp); empty: every device
  // the process sees, round-robin. Distinct ordinals; unused on the CPU.
  std::vector<int> devices;
  std::string metrics_file;          // default "<output_dir>/metrics.jsonl"
};

// One host (process) of the cluster.
struct Member {
  std::string name;                  // unique, [A-Za-z0-9_.-]{1,64}
  std::string address;               // IP literal or host name to listen on and be reached at
  uint16_t port = 0;                 // 0 = ephemeral: allowed only when the member needs no inbound connection
  std::vector<Role> roles;           // "all" in the file expands to all four
  int trainers = 0;                  // trainer ranks hosted: >= 1 with the trainer role, else 0
  int embedding_shards = 0;          // shards hosted: >= 1 with the embedding role, else 0
  int first_trainer_rank = 0;        // derived: ranks are numbered in member order
  int first_shard = 0;               // derived: shards are numbered in member order
  int line = 0;                      // where the member is declared, for later messages

  bool Has(Role r) const;
};

struct ClusterConfig {
  std::string secret;                // >= 16 characters; from `secret` or `secret_file` (exactly one)
  std::string coordinator;           // the member hosting supervisor and inspector; default: the oracle's member
  int heartbeat_ms = 200;            // 10..60000
  int peer_timeout_ms = 3000;        // >= 3 * heartbeat_ms
  int join_timeout_ms = 30000;       // > 0
  // How trainers in different processes sum their gradients: "tls" (mutual
  // TLS keyed by the secret, gpu/tls_collective.hpp), "gloo" (plain,
  // unauthenticated TCP: only for a trusted network), "nccl" (between GPUs,
  // gpu/nccl_collective.hpp; as unauthenticated as Gloo) or "auto" (NCCL
  // when every trainer rank can join it, else TLS; gpu/nccl_rendezvous.hpp).
  std::string collective = "tls";
  // Recovery (docs/reliability.md). max_restarts > 0 makes `actorrec node`
  // an agent that runs the member in a worker process and restarts it when
  // it dies, the whole cluster then resuming from its newest snapshot; 0
  // keeps one process per member, and a lost member ends the run (exit 3).
  int max_restarts = 0;              // 0..1000: crashes of one member's worker before its agent gives up
  int restart_backoff_ms = 200;      // 0..600000: wait before the first restart, doubled per crash (at most 10 s)
  // Batches between snapshots (checkpoints for recovery) when the agent runs
  // and --checkpoint-every is not given: each costs a pause of the pipeline
  // and a copy of every row (measured: about 8 batches' time on the
  // three-member DLRM of tools/recovery_measure.py, so 200 keeps the cost
  // near 4 %; docs/reliability.md), and a recovery replays up to
  // snapshot_every − 1 batches.
  int snapshot_every = 200;          // 1..1e9
  std::vector<Member> members;       // at least one

  int TotalTrainers() const;
  int TotalShards() const;
  // nullptr when no member has that name.
  const Member* Find(std::string_view name) const;
  const Member& Coordinator() const;
};

struct Config {
  std::string path;                  // as given, or "<embedded local.toml>"
  std::string digest;                // Digest64Hex of the file's bytes and the overrides: "same config" check
  std::vector<std::string> overrides;  // the --set key=value pairs applied on top of the file, in order
  RunConfig run;
  ModelConfig model;
  OptimizerConfig optimizer;
  DatasetConfig dataset;
  TrainingConfig training;
  ClusterConfig cluster;
};

// Reads and validates `path`. Throws ConfigError (a missing or unreadable
// file is a ConfigError too, naming the path).
Config LoadConfig(const std::string& path);

// Validates TOML text; `path` is used in messages and to resolve relative
// paths ("" = the working directory).
Config ParseConfig(std::string_view toml_text, const std::string& path);

// `path` (the embedded default when empty) with `overrides` applied on top,
// each "dotted.key=value" as given to --set: the value is TOML (4096, 0.5,
// true, [512, 256], "text"), or else taken as a string (lrpp_delayed), and
// replaces the file's value or adds the key; sub-tables are created as
// needed. "dotted.key=" (nothing after the =) removes the key, a table or an
// array of tables too (model.crosses), which then takes its default; one
// that is not set is a problem. The result is validated as if the file said so, and a problem with
// an overridden key names the --set that gave it. The digest covers the
// overrides: cluster members must be given the same ones.
Config LoadConfigWith(const std::string& path, std::span<const std::string> overrides);

// configs/local.toml as compiled into the binary.
std::string_view EmbeddedLocalToml();

// The embedded default, parsed. Name in messages: "<embedded local.toml>".
Config LoadEmbeddedLocal();

}  // namespace actorrec::config
