#include "tools/train_command.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <pthread.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>
#include <ctime>
#include <streambuf>

#include "actors/common/exit_codes.hpp"
#include "actors/inspector/inspector_service.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "base/byte_units.hpp"
#include "base/digest.hpp"
#include "base/json_number.hpp"
#include "data/bad_record_tally.hpp"
#include "data/format/dataset.hpp"
#include "tools/bench/sgemm_rate.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;

// metrics.jsonl, opened at its first line and appended to: each attempt
// (a first run, a resume, a rerun) starts with an "attempt" line, so the
// file keeps the run's history. A run that fails before it trained a batch
// leaves the file as it was.
class MetricsFile {
 public:
  explicit MetricsFile(std::string path) : path_(std::move(path)) {}
  // Whether the file can be written, found without changing it (an existing
  // file is opened for appending, a new one created and removed again); on
  // failure *error says why.
  bool Writable(std::string* error) const {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    const bool existed = std::filesystem::exists(path_, ec);
    std::ofstream probe(path_, std::ios::app);
    if (!probe) {
      *error = std::strerror(errno);
      return false;
    }
    probe.close();
    if (!existed) std::filesystem::remove(path_, ec);
    return true;
  }
  // The line that opens this attempt's part of the file.
  void SetAttempt(std::string line) { attempt_ = std::move(line); }
  std::ostream& Line() {
    if (!file_.is_open()) {
      file_.open(path_, std::ios::app);
      file_ << std::setprecision(9) << attempt_ << "\n";
    }
    return file_;
  }
  bool opened() const { return file_.is_open(); }

 private:
  std::string path_;
  std::string attempt_;
  std::ofstream file_;
};

// What `out` gets, also appended to the run directory's train.log, so that
// the directory keeps every attempt's output beside its metrics.
class TeeBuf : public std::streambuf {
 public:
  TeeBuf(std::streambuf* a, std::streambuf* b) : a_(a), b_(b) {}

 protected:
  int overflow(int c) override {
    if (c == EOF) return !EOF;
    if (b_ != nullptr) b_->sputc(static_cast<char>(c));
    return a_->sputc(static_cast<char>(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (b_ != nullptr) b_->sputn(s, n);
    return a_->sputn(s, n);
  }
  int sync() override {
    if (b_ != nullptr) b_->pubsync();
    return a_->pubsync();
  }

 private:
  std::streambuf* a_;
  std::streambuf* b_;
};

// UTC now as 2026-11-26T18:00:00Z.
std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Keeps the config of the latest attempt in the run directory: the file's
// text (or the embedded default's) under a header naming its source and
// the --set overrides applied on top.
void KeepConfig(const config::Config& cfg, const std::string& dir) {
  std::string text;
  if (cfg.path.starts_with("<")) {
    text = std::string(config::EmbeddedLocalToml());
  } else {
    std::ifstream in(cfg.path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream keep(dir + "/config.toml", std::ios::trunc);
  keep << "# The config of this run's latest attempt (" << UtcNow() << "): " << cfg.path << "\n";
  for (const std::string& o : cfg.overrides) keep << "# with --set " << o << "\n";
  keep << text;
}

// The global batch a failed run had reached, from its metrics.jsonl: the
// first batch of its last "attempt" or "recovery" line (0 without one) plus
// the batch lines after it. 0 when the file cannot be read.
uint64_t BatchesReached(const std::string& path) {
  std::ifstream in(path);
  uint64_t base = 0, count = 0;
  auto restart_at = [&](const std::string& line, const std::string& key) {
    if (const size_t at = line.find(key); at != std::string::npos) {
      base = std::strtoull(line.c_str() + at + key.size(), nullptr, 10);
      count = 0;
    }
  };
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("{\"event\":\"batch\"")) {
      ++count;
    } else if (line.starts_with("{\"event\":\"attempt\"")) {
      restart_at(line, "\"first_batch\":");
    } else if (line.starts_with("{\"event\":\"recovery\"")) {
      restart_at(line, "\"snapshot_batch\":");
    }
  }
  return base + count;
}

std::atomic<int> g_stop_signal{0};
extern "C" void OnStopSignal(int sig) {
  if (g_stop_signal.exchange(sig) != 0) std::_Exit(128 + sig);  // a second signal: now
}


// What TrainConfig needs of a run, over the two drivers: the actor pipeline
// (every mode) and the lockstep driver (--lockstep).
class Run {
 public:
  virtual ~Run() = default;
  virtual Result<bool> Step(trainer::StepReport* step) = 0;
  virtual Status Finish() = 0;
  virtual Result<trainer::EvalReport> Evaluate(uint64_t max_samples) = 0;
  virtual Result<uint64_t> ParameterDigest() = 0;
  virtual Status SaveCheckpoint(const std::string& dir) = 0;
  // Stops at a batch boundary soon (a stop signal), where SaveCheckpoint may
  // be called once Step() returned false: the pipeline finishes the batches
  // its oracle already sent; the lockstep driver stops at once.
  virtual Status StopSoon() = 0;
  virtual uint64_t first_batch() const = 0;
  virtual const std::string& lookahead_report() const = 0;
  virtual uint32_t trainers() const = 0;
  virtual uint32_t shards() const = 0;
  virtual const data::DatasetSchema& schema() const = 0;
  virtual uint64_t row_bytes() const = 0;
  virtual data::BadRecords skipped_records() const = 0;
  virtual Result<std::vector<trainer::ShardUsage>> ShardUsages() = 0;
  // The oracle actor's statistics of its plans; NotSupported without one.
  virtual Result<trainer::PipelineRun::PlanReport> OracleStats() = 0;
  virtual bool pipelined() const = 0;
  // When the run began working: the pipeline's actors start before the
  // first Step(); the lockstep driver works only inside Step() (nullopt).
  virtual std::optional<Clock::time_point> started_at() const = 0;
  // The planned names of the run's actors; empty without actors (lockstep).
  virtual std::vector<std::string> actor_names() const = 0;
  // The message counters of this process's actors; empty without actors.
  virtual std::vector<NamedMeter> actor_meters() const = 0;
  // Slots of each trainer's cache; 0 for the lockstep driver (no partitions).
  virtual uint64_t cache_slots() const = 0;
};

template <class R>
class RunOf final : public Run {
 public:
  explicit RunOf(std::unique_ptr<R> run) : run_(std::move(run)) {}
  Result<bool> Step(trainer::StepReport* step) override {
    if (stopped_) return false;
    return run_->Step(step);
  }
  Status Finish() override { return run_->Finish(); }
  Result<trainer::EvalReport> Evaluate(uint64_t max_samples) override { return run_->Evaluate(max_samples); }
  Result<uint64_t> ParameterDigest() override { return run_->ParameterDigest(); }
  Status SaveCheckpoint(const std::string& dir) override { return run_->SaveCheckpoint(dir); }
  Status StopSoon() override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->StopAfterPlanned();
    } else {
      stopped_ = true;  // between batches already
      return Status::Ok();
    }
  }
  uint64_t first_batch() const override { return static_cast<uint64_t>(run_->first_batch()); }
  const std::string& lookahead_report() const override { return run_->lookahead_report(); }
  uint32_t trainers() const override { return run_->trainers(); }
  uint32_t shards() const override { return run_->shards(); }
  const data::DatasetSchema& schema() const override { return run_->schema(); }
  uint64_t row_bytes() const override { return run_->row_bytes(); }
  data::BadRecords skipped_records() const override { return run_->skipped_records(); }
  Result<std::vector<trainer::ShardUsage>> ShardUsages() override { return run_->ShardUsages(); }
  Result<trainer::PipelineRun::PlanReport> OracleStats() override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->OracleStats();
    } else {
      return Status::NotSupported("the lockstep driver runs no oracle actor");
    }
  }
  bool pipelined() const override { return std::is_same_v<R, trainer::PipelineRun>; }
  std::vector<NamedMeter> actor_meters() const override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->actor_meters();
    } else {
      return {};
    }
  }
  uint64_t cache_slots() const override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->cache_slots();
    } else {
      return 0;
    }
  }
  std::vector<std::string> actor_names() const override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->actor_names();
    } else {
      return {};
    }
  }
  std::optional<Clock::time_point> started_at() const override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->started_at();
    } else {
      return std::nullopt;
    }
  }

 private:
  std::unique_ptr<R> run_;
  bool stopped_ = false;  // the lockstep driver after StopSoon()
};

Result<std::unique_ptr<Run>> CreateRun(const config::Config& cfg, const TrainOptions& options, std::ostream& out) {
  // Pauses where evaluation or a checkpoint needs a quiet run.
  const auto pause_every = std::gcd(cfg.training.eval_every, options.checkpoint_every);
  if (options.cluster != nullptr) {
    trainer::PipelineRun::Options pipeline;
    pipeline.pause_every = pause_every;
    pipeline.resume_dir = options.resume_dir;
    auto run = trainer::PipelineRun::CreateCoordinator(cfg, pipeline, *options.cluster);
    if (!run.ok()) return run.status();
    out << "training with the cluster's actor pipeline: every member's actors found through the supervisor, "
           "rows and plans over CAF's middleman, gradients over Gloo\n";
    return std::unique_ptr<Run>(std::make_unique<RunOf<trainer::PipelineRun>>(std::move(run).value()));
  }
  if (!options.lockstep) {
    trainer::PipelineRun::Options pipeline;
    pipeline.pause_every = pause_every;
    pipeline.resume_dir = options.resume_dir;
    auto run = trainer::PipelineRun::Create(cfg, pipeline);
    if (!run.ok()) return run.status();
    out << "training with the actor pipeline: oracle, shards, cache partitions, trainers and sync schedulers "
           "exchanging messages, prefetch"
        << (cfg.training.mode == config::Mode::kLrppDelayed ? " and delayed sync" : "") << " overlapping compute\n";
    if (Status s = (*run)->StartControlPlane(cfg, out); !s.ok()) return s;
    return std::unique_ptr<Run>(std::make_unique<RunOf<trainer::PipelineRun>>(std::move(run).value()));
  }
  auto run = options.resume_dir.empty() ? trainer::LockstepRun::Create(cfg)
                                        : trainer::LockstepRun::Resume(cfg, options.resume_dir);
  if (!run.ok()) return run.status();
  out << "training with the lockstep driver (--lockstep): every role's core called in turn on this thread, "
         "trainers in parallel, no role actors\n";
  return std::unique_ptr<Run>(std::make_unique<RunOf<trainer::LockstepRun>>(std::move(run).value()));
}

// Batches the run will train, when the dataset says how many samples it has.
// The batches the run will train, for the progress line's percentage and
// ETA: known for generated data and for an actorrec dataset file (its header
// counts the samples; opening it maps the file and reads nothing else), else
// only through training.max_batches (0: unknown, no ETA).
uint64_t PlannedBatches(const config::Config& cfg) {
  uint64_t samples = 0;
  if (cfg.dataset.source == "generated") {
    samples = cfg.dataset.samples;
  } else if (cfg.dataset.source == "actorrec") {
    if (auto dataset = data::format::Dataset::Open(cfg.dataset.path); dataset.ok()) samples = (*dataset)->size();
  }
  if (samples == 0) return cfg.training.max_batches;
  const uint64_t b = static_cast<uint64_t>(cfg.training.batch_size);
  const uint64_t total = (samples + b - 1) / b * static_cast<uint64_t>(cfg.training.epochs);
  return cfg.training.max_batches == 0 ? total : std::min(total, cfg.training.max_batches);
}

std::string Duration(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%dh%02dm", s / 3600, s / 60 % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dm%02ds", s / 60, s % 60);
  }
  return buf;
}

// The per-batch time breakdown. In the pipeline, fetches, delayed sync and
// write-backs run in the background: what shows is the time a trainer waited.
std::string PhaseLine(const trainer::StepTotals& t, double per_batch_ms, bool pipelined) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(2) << "  per batch (ms";
  if (pipelined) {
    line << ", slowest trainer): waiting for rows " << t.fetch_s * per_batch_ms << ", forward "
         << t.forward_s * per_batch_ms << ", backward " << t.backward_s * per_batch_ms << ", dense + critical sync "
         << t.dense_sync_s * per_batch_ms
         << " (of it exposed delayed sync " << t.exposed_delayed_s * per_batch_ms << "), optimizer "
         << t.optimizer_s * per_batch_ms;
  } else {
    line << "): fetch " << t.fetch_s * per_batch_ms << ", forward " << t.forward_s * per_batch_ms << ", backward "
         << t.backward_s * per_batch_ms
         << ", dense sync " << t.dense_sync_s * per_batch_ms << ", sparse sync " << t.sparse_sync_s * per_batch_ms
         << ", write-back " << t.write_back_s * per_batch_ms;
  }
  return line.str();
}

// The same breakdown for metrics.jsonl: every phase, in ms per batch.
std::string PhaseJson(const trainer::StepTotals& t, double per_batch_ms) {
  std::ostringstream j;
  j << std::setprecision(6) << "{\"fetch\":" << t.fetch_s * per_batch_ms << ",\"forward\":" << t.forward_s * per_batch_ms
    << ",\"backward\":" << t.backward_s * per_batch_ms << ",\"dense_sync\":" << t.dense_sync_s * per_batch_ms
    << ",\"exposed_delayed_sync\":" << t.exposed_delayed_s * per_batch_ms
    << ",\"sparse_sync\":" << t.sparse_sync_s * per_batch_ms << ",\"write_back\":" << t.write_back_s * per_batch_ms
    << ",\"optimizer\":" << t.optimizer_s * per_batch_ms << "}";
  return j.str();
}

// Whose clock timed the compute stream's waits (gpu::StreamWaits).
const char* WaitsClock(bool on_device) { return on_device ? "device" : "host"; }

// The compute stream's waits per batch (gpu::StreamWaits), for the summary
// and, as JSON, for metrics.jsonl.
std::string StreamWaitsLine(const trainer::StepTotals& t, double per_batch_ms) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(2) << "  compute stream waited per batch (ms, "
       << (t.waits_on_device ? "device clock: CUDA events" : "host clock") << "): for rows "
       << t.stream_wait_rows_s * per_batch_ms << ", for sync " << t.stream_wait_sync_s * per_batch_ms;
  return line.str();
}
std::string StreamWaitsJson(const trainer::StepTotals& t, double per_batch_ms) {
  std::ostringstream j;
  j << std::setprecision(6) << "{\"rows\":" << t.stream_wait_rows_s * per_batch_ms
    << ",\"sync\":" << t.stream_wait_sync_s * per_batch_ms << ",\"clock\":\"" << WaitsClock(t.waits_on_device)
    << "\"}";
  return j.str();
}

// Skipped records by reason: {"skipped":N,"by_reason":{"reason":n,...}}.
// Reasons are the readers' own short literals (no quotes or control bytes).
std::string BadRecordsJson(const data::BadRecords& bad) {
  std::string j = "{\"skipped\":" + std::to_string(bad.skipped) + ",\"by_reason\":{";
  bool first = true;
  for (const auto& [reason, count] : bad.by_reason) {
    j += (first ? "\"" : ",\"") + reason + "\":" + std::to_string(count);
    first = false;
  }
  return j + "}}";
}

std::string EvalJson(uint64_t batches, const trainer::EvalReport& e) {
  std::ostringstream j;
  j << std::setprecision(9) << "{\"event\":\"eval\",\"batches\":" << batches << ",\"samples\":" << e.samples
    << ",\"auc\":" << JsonNum{e.auc} << ",\"log_loss\":" << JsonNum{e.log_loss}
    << ",\"accuracy\":" << JsonNum{e.accuracy};
  if (!std::isnan(e.bayes_auc)) j << ",\"bayes_auc\":" << JsonNum{e.bayes_auc};
  j << "}";
  return j.str();
}

// The GEMM roofline for the board (--roofline), measured as
// train_bench measures it: sgemm on the model's MLP shapes, one slice per
// trainer, every trainer's thread at once; before the run's actors start, so
// that neither slows the other (about 10 s for the default config on a
// 2-core VM: why it is asked for, not done by default). Nothing when the
// data or the backend cannot be opened (the run then says why).
void MeasureRoofline(const config::Config& cfg, inspector::Board* board) {
  auto reader = OpenDatasetSplit(cfg, Split::kTrain);
  if (!reader.ok()) return;
  const data::DatasetSchema& schema = (*reader)->schema();
  const models::ModelSpec spec = models::SpecOf(cfg.model, static_cast<uint32_t>(schema.num_dense()),
                                                static_cast<uint32_t>(schema.num_tables()));
  const int trainers = static_cast<int>(std::max<size_t>(1, cfg.cluster.TotalTrainers()));
  const int slice = cfg.training.batch_size / trainers;
  auto choice = gpu::ChooseBackend(cfg.training.backend);
  if (!choice.ok() || slice <= 0) return;
  if (auto rate = bench::MeasureSgemmRate(spec, slice, trainers, *choice); rate.ok()) {
    board->SetGemm(rate->best, models::MlpFlopsPerSample(spec));
  }
}

// What the embedding shards hold, for the board.
std::vector<inspector::ShardFigures> ShardFiguresOf(const std::vector<trainer::ShardUsage>& usages) {
  std::vector<inspector::ShardFigures> shards;
  for (const trainer::ShardUsage& u : usages) shards.push_back({u.rows, u.bytes});
  return shards;
}

// The actors of the run for the board, by member as the topology places
// them (actors/node/actor_plan.hpp); the coordinator also hosts the control
// plane's supervisor and inspector. None without actors (lockstep).
std::vector<inspector::ActorRow> ActorRows(const config::Config& cfg, const Run& run) {
  if (run.actor_names().empty()) return {};
  std::vector<inspector::ActorRow> rows;
  for (const config::Member& m : cfg.cluster.members) {
    if (m.name == cfg.cluster.coordinator) {
      rows.push_back({m.name, m.address, "supervisor", "supervisor"});
      rows.push_back({m.name, m.address, "inspector", "inspector"});
    }
    for (const PlannedActor& a : ActorsOf(m)) {
      rows.push_back({m.name, m.address, a.name, a.name.substr(0, a.name.find('['))});
    }
  }
  return rows;
}

}  // namespace

int TrainConfig(const config::Config& cfg, const TrainOptions& options, std::ostream& caller_out, std::ostream& err) {
  const auto started = Clock::now();
  // The run directory keeps this attempt's output and config (its metrics
  // follow at the first batch).
  const std::string dir = cfg.run.output_dir.empty() ? "runs/" + cfg.run.name : cfg.run.output_dir;
  std::error_code dir_error;
  std::filesystem::create_directories(dir, dir_error);
  std::ofstream log_file(dir + "/train.log", std::ios::app);
  TeeBuf tee(caller_out.rdbuf(), log_file ? log_file.rdbuf() : nullptr);
  std::ostream out(&tee);
  if (log_file) {
    log_file << "---- attempt " << UtcNow() << ": actorrec train " << cfg.path
             << (options.resume_dir.empty() ? "" : " --resume " + options.resume_dir) << "\n";
    KeepConfig(cfg, dir);
  }
  // The stop signals first: one that comes while the run is being created
  // (in a cluster, while every member's actors are looked up) stops it
  // cleanly too, instead of killing the process with the members not told.
  // `actorrec node` keeps them blocked until here, so one that came before
  // is delivered now, to this handler.
  g_stop_signal = 0;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
  // The inspector first, so that its address is printed at start and the
  // page shows the run coming up.
  auto board = std::make_shared<inspector::Board>();
  std::unique_ptr<inspector::InspectorService> inspect_service;
  const std::string inspect_at = options.inspect_address.empty() ? cfg.run.inspect_address : options.inspect_address;
  if (inspect_at != "off") {
    auto service = inspector::InspectorService::Start(inspect_at, cfg.cluster.secret, board);
    if (!service.ok()) {
      err << "actorrec train: " << service.status().message() << " (--inspect or run.inspect_address)\n";
      return kExitUsage;
    }
    inspect_service = std::move(service).value();
    out << "inspector: " << inspect_service->url() << "\n" << std::flush;
  }
  if (inspect_service && options.roofline) {
    MeasureRoofline(cfg, board.get());
  }
  auto created = CreateRun(cfg, options, out);
  if (!created.ok()) {
    board->SetState("failed");
    err << "actorrec train: " << created.status().message() << "\n";
    return ExitCodeOf(created.status());
  }
  Run& run = **created;
  out << "trainers " << run.trainers() << ", embedding shards " << run.shards() << ", "
      << run.schema().num_tables() << " tables"
      << (cfg.model.crosses.empty() ? std::string()
                                    : " (the last " + std::to_string(cfg.model.crosses.size()) +
                                          " crossed columns, wide only)")
      << ", " << run.schema().num_dense() << " dense features, "
      << run.row_bytes() << " bytes per row (weights and optimizer state)\n";

  const std::string metrics_path = cfg.training.metrics_file.empty() ? dir + "/metrics.jsonl" : cfg.training.metrics_file;
  MetricsFile metrics(metrics_path);
  if (std::string why; !metrics.Writable(&why)) {
    err << "actorrec train: cannot write the metrics file " << metrics_path
        << " (training.metrics_file or run.output_dir): " << why << "\n";
    return kExitUsage;
  }

  const uint64_t first = run.first_batch();
  const uint64_t whole = PlannedBatches(cfg);
  const uint64_t planned = whole > first ? whole - first : (whole == 0 ? 0 : 1);
  metrics.SetAttempt("{\"event\":\"attempt\",\"started\":\"" + UtcNow() + "\",\"first_batch\":" +
                     std::to_string(first) + ",\"resume_dir\":" + JsonString(options.resume_dir) +
                     ",\"config\":" + JsonString(cfg.path) + ",\"config_digest\":" + JsonString(cfg.digest) + "}");
  {
    inspector::RunInfo info;
    info.name = cfg.run.name;
    info.model = config::ModelKindName(cfg.model.kind);
    info.mode = config::ModeName(cfg.training.mode);
    info.driver = run.pipelined() ? "actor pipeline" : "lockstep";
    info.backend = cfg.training.backend;
    info.trainers = run.trainers();
    info.shards = run.shards();
    info.first_batch = first;
    info.planned_batches = planned;
    info.row_bytes = run.row_bytes();
    info.cache_slots = run.cache_slots();
    board->SetRun(info);
    board->SetActors(ActorRows(cfg, run));
    // The actors' message counters, read by the server thread when it renders.
    board->SetActorCounters([meters = run.actor_meters()] {
      std::vector<inspector::ActorCount> counts;
      counts.reserve(meters.size());
      for (const NamedMeter& m : meters) {
        counts.push_back({m.name, m.meter->enqueued.load(std::memory_order_relaxed),
                          m.meter->handled.load(std::memory_order_relaxed)});
      }
      return counts;
    });
    board->SetState("training");
  }
  // The oracle's figures and the shards' residency for the board, asked
  // now and then (one request to the oracle actor and one to each shard),
  // first at the first batch: often enough for a live page, rare enough to
  // cost the training nothing measurable.
  auto last_oracle_ask = Clock::now() - std::chrono::seconds(5);
  if (!options.resume_dir.empty()) out << "resumed from " << options.resume_dir << " after batch " << first << "\n";
  if (options.recovering) {
    // Training again after a failure: the rollback is done (the run above
    // loaded its snapshot in every member).
    const uint64_t reached = BatchesReached(metrics_path);
    const uint64_t replayed = reached > first ? reached - first : 0;
    const auto unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    out << "recovered: rolled back to " << (options.resume_dir.empty() ? "the start" : options.resume_dir)
        << " after batch " << first << "; the failed run had reached batch " << reached << ", " << replayed
        << " batch(es) to replay\n";
    std::string snapshot;
    AppendJsonString(&snapshot, options.resume_dir);
    metrics.Line() << "{\"event\":\"recovery\",\"snapshot\":" << snapshot << ",\"snapshot_batch\":" << first << ",\"reached_batch\":" << reached
                   << ",\"batches_replayed\":" << replayed << ",\"unix_ms\":" << unix_ms << "}\n";
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  trainer::StepTotals totals;
  uint64_t checkpointed = UINT64_MAX;  // the batch of the last checkpoint written
  auto checkpoint = [&](const char* when) -> bool {
    if (checkpointed == first + totals.batches) return true;
    const auto began = Clock::now();
    if (Status st = run.SaveCheckpoint(options.checkpoint_dir); !st.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: checkpoint failed: " << st.message() << "\n";
      return false;
    }
    checkpointed = first + totals.batches;
    // The pause it took, for the snapshots' cost (tools/recovery_measure.py).
    metrics.Line() << "{\"event\":\"checkpoint\",\"when\":\"" << when << "\",\"after_batch\":" << checkpointed
                   << ",\"seconds\":" << std::chrono::duration<double>(Clock::now() - began).count() << "}\n"
                   << std::flush;
    out << (tty ? "\r\033[K" : "") << "checkpoint " << when << " after " << first + totals.batches
        << " batches: " << options.checkpoint_dir << "\n";
    return true;
  };
  double window_loss = 0;
  uint64_t window_samples = 0;
  auto last_print = Clock::now();
  // Throughput counts from when the run began working, so that batches a
  // pipeline finished during start-up are not counted as free.
  const auto train_start = run.started_at().value_or(Clock::now());
  trainer::StepReport step;
  int code = kExitOk;
  bool eval_unsupported = false;
  auto evaluate = [&](const char* when) -> bool {
    if (eval_unsupported) return true;
    auto eval = run.Evaluate(0);
    if (!eval.ok() && eval.status().code() == Status::Code::kNotSupported) {
      out << (tty ? "\r\033[K" : "") << "eval skipped: " << eval.status().message() << "\n";
      eval_unsupported = true;
      return true;
    }
    if (!eval.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: evaluation failed: " << eval.status().message() << "\n";
      return false;
    }
    out << (tty ? "\r\033[K" : "") << "eval " << when << " after " << first + totals.batches << " batches: AUC "
        << std::fixed << std::setprecision(4) << eval->auc << ", log-loss " << eval->log_loss << ", accuracy "
        << eval->accuracy << std::defaultfloat << " (" << eval->samples << " samples)";
    if (!std::isnan(eval->bayes_auc)) {
      // How far from the best possible on these samples: the generator knows
      // every sample's true click probability.
      out << std::fixed << std::setprecision(4) << "; Bayes-optimal AUC " << eval->bayes_auc << ", gap "
          << eval->bayes_auc - eval->auc << std::defaultfloat;
    }
    out << "\n";
    metrics.Line() << EvalJson(first + totals.batches, *eval) << "\n";
    board->AddEval(first + totals.batches, eval->auc, eval->log_loss);
    return true;
  };

  // A stop signal with a checkpoint directory ends the run at a batch
  // boundary with a checkpoint there; without one it ends after this batch.
  bool stopping = false;
  while (true) {
    if (g_stop_signal != 0 && !stopping) {
      if (options.checkpoint_dir.empty()) break;
      stopping = true;
      out << (tty ? "\r\033[K" : "") << "signal " << g_stop_signal
          << " received: finishing the batches already planned, then a checkpoint\n"
          << std::flush;
      if (Status st = run.StopSoon(); !st.ok()) {
        err << "actorrec train: cannot stop at a batch boundary: " << st.message() << "\n";
        code = kExitFailure;
        break;
      }
    }
    auto more = run.Step(&step);
    if (!more.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: " << more.status().message() << "\n";
      // InvalidArgument is the input's fault (the cache too small for the
      // data, a bad record): exit as `actorrec plan` does for it.
      code = more.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
      break;
    }
    if (!*more) break;
    if (!std::isfinite(step.loss_sum)) {
      // Diverged (a learning rate too high, say): every later batch and any
      // checkpoint from here on would hold NaN parameters. Stop before the
      // checkpoint below, so the last one written stays the last good one.
      err << (tty ? "\n" : "") << "actorrec train: the loss of batch " << step.batch << " of epoch " << step.epoch
          << " is " << (std::isnan(step.loss_sum) ? "NaN" : "infinite")
          << ": training diverged (optimizer.dense_lr or sparse_lr too high?); stopped without a checkpoint of these "
             "parameters";
      if (!options.checkpoint_dir.empty()) err << " (the last good one in " << options.checkpoint_dir << " is kept)";
      err << "\n";
      metrics.Line() << "{\"event\":\"diverged\",\"epoch\":" << step.epoch << ",\"batch\":" << step.batch << "}\n";
      code = kExitDiverged;
      break;
    }
    if (totals.batches == 0 && !run.lookahead_report().empty()) out << run.lookahead_report() << "\n";
    totals.Add(step);
    window_loss += step.loss_sum;
    window_samples += step.samples;
    metrics.Line() << "{\"event\":\"batch\",\"epoch\":" << step.epoch << ",\"batch\":" << step.batch
            << ",\"samples\":" << step.samples
            << ",\"loss\":" << JsonNum{step.loss_sum / std::max<uint64_t>(1, step.samples)}
            << ",\"unique_rows\":" << step.unique_rows << ",\"missed_rows\":" << step.missed_rows
            << ",\"fetched_rows\":" << step.fetched_rows << ",\"written_rows\":" << step.written_rows
            << ",\"critical_rows\":" << step.synced_critical << ",\"delayed_rows\":" << step.synced_delayed
            << ",\"private_rows\":" << step.private_rows << ",\"fetch_s\":" << step.fetch_s
            << ",\"forward_s\":" << step.forward_s << ",\"backward_s\":" << step.backward_s
            << ",\"dense_sync_s\":" << step.dense_sync_s << ",\"exposed_delayed_s\":" << step.exposed_delayed_s
            << ",\"optimizer_s\":" << step.optimizer_s << ",\"stream_wait_rows_s\":" << step.stream_wait_rows_s
            << ",\"stream_wait_sync_s\":" << step.stream_wait_sync_s << ",\"stream_waits_clock\":\""
            << WaitsClock(step.waits_on_device) << "\",\"elapsed_s\":"
            << std::chrono::duration<double>(Clock::now() - train_start).count() << "}\n"
            << std::flush;  // one write per batch: `tail -f` and a recovery see every batch done

    const double elapsed = std::chrono::duration<double>(Clock::now() - train_start).count();
    board->AddBatch(step, elapsed);
    if (inspect_service && run.pipelined() && Clock::now() - last_oracle_ask > std::chrono::seconds(5)) {
      if (auto stats = run.OracleStats(); stats.ok()) board->SetOracle(stats->json);
      if (auto usages = run.ShardUsages(); usages.ok()) board->SetShards(ShardFiguresOf(*usages));
      last_oracle_ask = Clock::now();
    }
    const bool last = planned != 0 && totals.batches >= planned;
    if (Clock::now() - last_print > std::chrono::milliseconds(tty ? 250 : 5000) || last) {
      const double rate = totals.samples / std::max(elapsed, 1e-9);
      std::ostringstream line;
      line << "batch " << totals.batches;
      if (planned) line << "/" << planned << " (" << 100 * totals.batches / planned << "%)";
      line << std::fixed << std::setprecision(0) << "  " << rate << " samples/s  loss "
           << std::setprecision(4) << window_loss / std::max<uint64_t>(1, window_samples);
      if (planned && totals.batches < planned) {
        line << "  ETA " << Duration(elapsed / totals.batches * (planned - totals.batches));
      }
      if (tty) {
        err << "\r\033[K" << line.str() << std::flush;
      } else {
        err << line.str() << "\n";
      }
      window_loss = 0;
      window_samples = 0;
      last_print = Clock::now();
    }
    // Evaluations and checkpoints fall on global batches, so a resumed or
    // recovered run evaluates where the uninterrupted one does.
    const uint64_t global = first + totals.batches;
    if (cfg.training.eval_every != 0 && global % cfg.training.eval_every == 0) {
      if (!evaluate("periodic")) {
        code = kExitFailure;
        break;
      }
    }
    if (!options.checkpoint_dir.empty() && options.checkpoint_every != 0 &&
        global % options.checkpoint_every == 0 && !last) {
      if (!checkpoint("periodic")) {
        code = kExitFailure;
        break;
      }
    }
  }
  if (tty) err << "\n";
  const bool interrupted = g_stop_signal != 0;
  board->SetState(interrupted ? "stopped" : code != kExitOk ? "failed" : "finishing");
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (interrupted) out << "stopped by signal " << g_stop_signal << " after batch " << first + totals.batches << "\n";
  if (code != kExitOk && totals.batches == 0) {
    // A failed start: nothing trained, so no summary of zeros, and a
    // previous run's metrics stay as they were.
    if (options.before_teardown) options.before_teardown(code, 0);
    return code;
  }
  bool stop_checkpoint_failed = false;
  if (interrupted && stopping && code == kExitOk) {
    if (!checkpoint("on stop")) {
      stop_checkpoint_failed = true;
    } else {
      const std::string config_flag = cfg.path.starts_with("<") ? "" : " --config " + cfg.path;
      out << "resume with: actorrec "
          << (options.cluster != nullptr ? "node" + config_flag + " --member <each member>" : "train" + config_flag)
          << " --resume " << options.checkpoint_dir << "\n";
    }
  }

  if (code == kExitOk && !interrupted) {
    if (Status st = run.Finish(); !st.ok()) {
      err << "actorrec train: " << st.message() << "\n";
      code = kExitFailure;
    } else if (cfg.dataset.has_eval()) {
      if (!evaluate("final")) code = kExitFailure;
    }
    // Snapshots in memory end with the agents: no final one.
    const bool in_memory = options.cluster != nullptr && !options.cluster->snapshot_store.empty();
    if (code == kExitOk && !options.checkpoint_dir.empty() && !in_memory && !checkpoint("final")) code = kExitFailure;
  }

  const double train_s = std::chrono::duration<double>(Clock::now() - train_start).count();
  const double per_batch = 1e3 / std::max<uint64_t>(1, totals.batches);
  const double b = std::max<uint64_t>(1, totals.batches);
  out << std::fixed << std::setprecision(1) << "summary: " << totals.batches << " batches, " << totals.samples
      << " samples in " << train_s << " s: " << std::setprecision(0) << totals.samples / std::max(train_s, 1e-9)
      << " samples/s, mean loss " << std::setprecision(4) << totals.loss_sum / std::max<uint64_t>(1, totals.samples)
      << "\n"
      << std::setprecision(2) << PhaseLine(totals, per_batch, run.pipelined()) << "\n"
      << StreamWaitsLine(totals, per_batch) << "\n"
      << std::setprecision(0) << "  rows per batch: " << totals.unique / b << " unique, " << totals.missed / b
      << " missed (cache hit share " << std::setprecision(1)
      << 100.0 * (1.0 - static_cast<double>(totals.missed) / std::max<uint64_t>(1, totals.unique)) << " %), "
      << std::setprecision(0) << totals.fetched / b << " fetched, " << totals.written / b << " written back, "
      << totals.critical / b << " critical sync, " << totals.delayed / b << " delayed sync, "
      << totals.private_rows / b << " private (" << run.row_bytes() << " bytes a row)\n"
      << "  bytes per batch: " << DecimalBytes(totals.fetched * run.row_bytes() / b) << " fetched, "
      << DecimalBytes(totals.written * run.row_bytes() / b) << " written back, "
      << DecimalBytes((totals.critical + totals.delayed) * run.row_bytes() / b) << " synced (sparse rows)\n";
  uint64_t shard_rows = 0, shard_bytes = 0;
  if (auto usage = run.ShardUsages(); usage.ok()) {
    board->SetShards(ShardFiguresOf(*usage));
    for (const trainer::ShardUsage& u : *usage) {
      shard_rows += u.rows;
      shard_bytes += u.bytes;
    }
    out << "  embedding shards: " << shard_rows << " rows resident in " << usage->size() << " shard(s), "
        << DecimalBytes(static_cast<double>(shard_bytes)) << " (rows are created when training first touches them)\n";
  } else {
    err << "actorrec train: " << usage.status().message() << "\n";
  }
  std::string oracle_json;
  if (run.pipelined()) {
    if (auto stats = run.OracleStats(); stats.ok()) {
      out << "  oracle: " << stats->summary << "\n";
      oracle_json = stats->json;
      board->SetOracle(oracle_json);
    } else {
      err << "actorrec train: " << stats.status().message() << "\n";
    }
  }
  const data::BadRecords skipped = run.skipped_records();
  out << data::DescribeSkipped(skipped);
  uint64_t digest = 0;
  if (code == kExitOk && !interrupted) {
    auto d = run.ParameterDigest();
    if (d.ok()) {
      digest = *d;
      // Equal digests mean bitwise equal parameters (dense and every row):
      // what the equivalence of modes, resumes and clusters is checked by.
      out << "  parameter digest: " << Hex64(digest) << "\n";
      board->SetDigest(Hex64(digest));
    }
  }
  out << "  metrics: " << metrics_path << "\n" << std::defaultfloat;
  // The file gets the summary once the run trained a batch or ended
  // normally: a run stopped before its first batch has nothing to add.
  std::ostringstream ending;
  if (!oracle_json.empty()) ending << "{\"event\":\"oracle\",\"stats\":" << oracle_json << "}\n";
  if (run.pipelined() && totals.batches > 0) {
    // The partitions, shards and GEMM rate as the inspector showed them last.
    const std::string parts = board->PartsJson();
    ending << "{\"event\":\"inspector\"," << parts.substr(1) << "\n";
  }
  ending << std::setprecision(9) << "{\"event\":\"summary\",\"batches\":" << totals.batches << ",\"samples\":" << totals.samples
          << ",\"seconds\":" << train_s << ",\"samples_per_s\":" << totals.samples / std::max(train_s, 1e-9)
          << ",\"ms_per_batch\":" << PhaseJson(totals, per_batch)
          << ",\"stream_wait_ms_per_batch\":" << StreamWaitsJson(totals, per_batch)
          << ",\"shard_rows\":" << shard_rows << ",\"shard_bytes\":" << shard_bytes
          << ",\"fetched_bytes_per_batch\":" << totals.fetched * run.row_bytes() / b
          << ",\"written_bytes_per_batch\":" << totals.written * run.row_bytes() / b
          << ",\"synced_bytes_per_batch\":" << (totals.critical + totals.delayed) * run.row_bytes() / b
          << ",\"bad_records\":" << BadRecordsJson(skipped)
          << ",\"parameter_digest\":\"" << Hex64(digest) << "\"}\n";
  if (metrics.opened() || (code == kExitOk && !interrupted)) metrics.Line() << ending.str();
  board->SetState(interrupted ? "stopped" : code != kExitOk ? "failed" : "finished");
  spdlog::info("train finished in {:.1f} s", std::chrono::duration<double>(Clock::now() - started).count());
  const int exit_code = stop_checkpoint_failed ? kExitFailure : interrupted ? 128 + g_stop_signal.load() : code;
  if (options.before_teardown) options.before_teardown(exit_code, interrupted ? g_stop_signal.load() : 0);
  return exit_code;
}

}  // namespace actorrec
