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

#include "actors/common/exit_codes.hpp"
#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "base/digest.hpp"

namespace actorrec {
namespace {

// "12.3 MB": decimal units, as data convert reports its sizes.
std::string Bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  size_t u = 0;
  while (bytes >= 1000 && u + 1 < std::size(units)) {
    bytes /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

using Clock = std::chrono::steady_clock;

std::atomic<int> g_stop_signal{0};
extern "C" void OnStopSignal(int sig) {
  if (g_stop_signal.exchange(sig) != 0) std::_Exit(128 + sig);  // a second signal: now
}

struct Totals {
  uint64_t batches = 0, samples = 0;
  double loss_sum = 0;
  uint64_t unique = 0, missed = 0, fetched = 0, written = 0, critical = 0, delayed = 0, private_rows = 0;
  double fetch_s = 0, forward_s = 0, backward_s = 0, dense_sync_s = 0, sparse_sync_s = 0, write_back_s = 0;
  double exposed_delayed_s = 0, optimizer_s = 0;
  void Add(const trainer::StepReport& r) {
    ++batches;
    samples += r.samples;
    loss_sum += r.loss_sum;
    unique += r.unique_rows;
    missed += r.missed_rows;
    fetched += r.fetched_rows;
    written += r.written_rows;
    critical += r.synced_critical;
    delayed += r.synced_delayed;
    private_rows += r.private_rows;
    fetch_s += r.fetch_s;
    forward_s += r.forward_s;
    backward_s += r.backward_s;
    dense_sync_s += r.dense_sync_s;
    sparse_sync_s += r.sparse_sync_s;
    write_back_s += r.write_back_s;
    exposed_delayed_s += r.exposed_delayed_s;
    optimizer_s += r.optimizer_s;
  }
};

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
  virtual uint64_t first_batch() const = 0;
  virtual const std::string& lookahead_report() const = 0;
  virtual uint32_t trainers() const = 0;
  virtual uint32_t shards() const = 0;
  virtual const data::DatasetSchema& schema() const = 0;
  virtual uint64_t row_bytes() const = 0;
  virtual Result<std::vector<trainer::ShardUsage>> ShardUsages() = 0;
  // The oracle actor's statistics of its plans; NotSupported without one.
  virtual Result<trainer::PipelineRun::PlanReport> OracleStats() = 0;
  virtual bool pipelined() const = 0;
  // When the run began working: the pipeline's actors start before the
  // first Step(); the lockstep driver works only inside Step() (nullopt).
  virtual std::optional<Clock::time_point> started_at() const = 0;
};

template <class R>
class RunOf final : public Run {
 public:
  explicit RunOf(std::unique_ptr<R> run) : run_(std::move(run)) {}
  Result<bool> Step(trainer::StepReport* step) override { return run_->Step(step); }
  Status Finish() override { return run_->Finish(); }
  Result<trainer::EvalReport> Evaluate(uint64_t max_samples) override { return run_->Evaluate(max_samples); }
  Result<uint64_t> ParameterDigest() override { return run_->ParameterDigest(); }
  Status SaveCheckpoint(const std::string& dir) override { return run_->SaveCheckpoint(dir); }
  uint64_t first_batch() const override { return static_cast<uint64_t>(run_->first_batch()); }
  const std::string& lookahead_report() const override { return run_->lookahead_report(); }
  uint32_t trainers() const override { return run_->trainers(); }
  uint32_t shards() const override { return run_->shards(); }
  const data::DatasetSchema& schema() const override { return run_->schema(); }
  uint64_t row_bytes() const override { return run_->row_bytes(); }
  Result<std::vector<trainer::ShardUsage>> ShardUsages() override { return run_->ShardUsages(); }
  Result<trainer::PipelineRun::PlanReport> OracleStats() override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->OracleStats();
    } else {
      return Status::NotSupported("the lockstep driver runs no oracle actor");
    }
  }
  bool pipelined() const override { return std::is_same_v<R, trainer::PipelineRun>; }
  std::optional<Clock::time_point> started_at() const override {
    if constexpr (std::is_same_v<R, trainer::PipelineRun>) {
      return run_->started_at();
    } else {
      return std::nullopt;
    }
  }

 private:
  std::unique_ptr<R> run_;
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
uint64_t PlannedBatches(const config::Config& cfg) {
  if (cfg.dataset.source != "generated") return cfg.training.max_batches;
  const uint64_t b = static_cast<uint64_t>(cfg.training.batch_size);
  const uint64_t total = (cfg.dataset.samples + b - 1) / b * static_cast<uint64_t>(cfg.training.epochs);
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
std::string PhaseLine(const Totals& t, double per_batch_ms, bool pipelined) {
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
std::string PhaseJson(const Totals& t, double per_batch_ms) {
  std::ostringstream j;
  j << std::setprecision(6) << "{\"fetch\":" << t.fetch_s * per_batch_ms << ",\"forward\":" << t.forward_s * per_batch_ms
    << ",\"backward\":" << t.backward_s * per_batch_ms << ",\"dense_sync\":" << t.dense_sync_s * per_batch_ms
    << ",\"exposed_delayed_sync\":" << t.exposed_delayed_s * per_batch_ms
    << ",\"sparse_sync\":" << t.sparse_sync_s * per_batch_ms << ",\"write_back\":" << t.write_back_s * per_batch_ms
    << ",\"optimizer\":" << t.optimizer_s * per_batch_ms << "}";
  return j.str();
}

std::string EvalJson(uint64_t batches, const trainer::EvalReport& e) {
  std::ostringstream j;
  j << std::setprecision(9) << "{\"event\":\"eval\",\"batches\":" << batches << ",\"samples\":" << e.samples
    << ",\"auc\":" << e.auc << ",\"log_loss\":" << e.log_loss << ",\"accuracy\":" << e.accuracy;
  if (!std::isnan(e.bayes_auc)) j << ",\"bayes_auc\":" << e.bayes_auc;
  j << "}";
  return j.str();
}

}  // namespace

int TrainConfig(const config::Config& cfg, const TrainOptions& options, std::ostream& out, std::ostream& err) {
  const auto started = Clock::now();
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
  auto created = CreateRun(cfg, options, out);
  if (!created.ok()) {
    err << "actorrec train: " << created.status().message() << "\n";
    return kExitUsage;
  }
  Run& run = **created;
  out << "trainers " << run.trainers() << ", embedding shards " << run.shards() << ", "
      << run.schema().num_tables() << " tables, " << run.schema().num_dense() << " dense features, "
      << run.row_bytes() << " bytes per row (weights and optimizer state)\n";

  const std::string dir = cfg.run.output_dir.empty() ? "runs/" + cfg.run.name : cfg.run.output_dir;
  const std::string metrics_path = cfg.training.metrics_file.empty() ? dir + "/metrics.jsonl" : cfg.training.metrics_file;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(metrics_path).parent_path(), ec);
  std::ofstream metrics(metrics_path, std::ios::trunc);
  if (!metrics) {
    err << "actorrec train: cannot write the metrics file " << metrics_path
        << " (training.metrics_file or run.output_dir): " << std::strerror(errno) << "\n";
    return kExitUsage;
  }
  metrics << std::setprecision(9);

  const uint64_t first = run.first_batch();
  const uint64_t whole = PlannedBatches(cfg);
  const uint64_t planned = whole > first ? whole - first : (whole == 0 ? 0 : 1);
  if (!options.resume_dir.empty()) out << "resumed from " << options.resume_dir << " after batch " << first << "\n";
  const bool tty = isatty(STDERR_FILENO) != 0;
  Totals totals;
  auto checkpoint = [&](const char* when) -> bool {
    if (Status st = run.SaveCheckpoint(options.checkpoint_dir); !st.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: checkpoint failed: " << st.message() << "\n";
      return false;
    }
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
    metrics << EvalJson(first + totals.batches, *eval) << "\n";
    return true;
  };

  while (g_stop_signal == 0) {
    auto more = run.Step(&step);
    if (!more.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: " << more.status().message() << "\n";
      code = kExitFailure;
      break;
    }
    if (!*more) break;
    if (totals.batches == 0 && !run.lookahead_report().empty()) out << run.lookahead_report() << "\n";
    totals.Add(step);
    window_loss += step.loss_sum;
    window_samples += step.samples;
    metrics << "{\"event\":\"batch\",\"epoch\":" << step.epoch << ",\"batch\":" << step.batch
            << ",\"samples\":" << step.samples << ",\"loss\":" << step.loss_sum / std::max<uint64_t>(1, step.samples)
            << ",\"unique_rows\":" << step.unique_rows << ",\"missed_rows\":" << step.missed_rows
            << ",\"fetched_rows\":" << step.fetched_rows << ",\"written_rows\":" << step.written_rows
            << ",\"critical_rows\":" << step.synced_critical << ",\"delayed_rows\":" << step.synced_delayed
            << ",\"private_rows\":" << step.private_rows << ",\"fetch_s\":" << step.fetch_s
            << ",\"forward_s\":" << step.forward_s << ",\"backward_s\":" << step.backward_s
            << ",\"dense_sync_s\":" << step.dense_sync_s << ",\"exposed_delayed_s\":" << step.exposed_delayed_s
            << ",\"optimizer_s\":" << step.optimizer_s << ",\"elapsed_s\":"
            << std::chrono::duration<double>(Clock::now() - train_start).count() << "}\n";

    const double elapsed = std::chrono::duration<double>(Clock::now() - train_start).count();
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
    if (cfg.training.eval_every != 0 && totals.batches % cfg.training.eval_every == 0) {
      if (!evaluate("periodic")) {
        code = kExitFailure;
        break;
      }
    }
    if (!options.checkpoint_dir.empty() && options.checkpoint_every != 0 &&
        totals.batches % options.checkpoint_every == 0 && !last) {
      if (!checkpoint("periodic")) {
        code = kExitFailure;
        break;
      }
    }
  }
  if (tty) err << "\n";
  const bool interrupted = g_stop_signal != 0;
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (interrupted) out << "stopped by signal " << g_stop_signal << " after batch " << totals.batches << "\n";

  if (code == kExitOk && !interrupted) {
    if (Status st = run.Finish(); !st.ok()) {
      err << "actorrec train: " << st.message() << "\n";
      code = kExitFailure;
    } else if (cfg.dataset.source == "generated" ? cfg.dataset.eval_samples > 0 : !cfg.dataset.eval_path.empty()) {
      if (!evaluate("final")) code = kExitFailure;
    }
    if (code == kExitOk && !options.checkpoint_dir.empty() && !checkpoint("final")) code = kExitFailure;
  }

  const double train_s = std::chrono::duration<double>(Clock::now() - train_start).count();
  const double per_batch = 1e3 / std::max<uint64_t>(1, totals.batches);
  const double b = std::max<uint64_t>(1, totals.batches);
  out << std::fixed << std::setprecision(1) << "summary: " << totals.batches << " batches, " << totals.samples
      << " samples in " << train_s << " s: " << std::setprecision(0) << totals.samples / std::max(train_s, 1e-9)
      << " samples/s, mean loss " << std::setprecision(4) << totals.loss_sum / std::max<uint64_t>(1, totals.samples)
      << "\n"
      << std::setprecision(2) << PhaseLine(totals, per_batch, run.pipelined()) << "\n"
      << std::setprecision(0) << "  rows per batch: " << totals.unique / b << " unique, " << totals.missed / b
      << " missed (cache hit share " << std::setprecision(1)
      << 100.0 * (1.0 - static_cast<double>(totals.missed) / std::max<uint64_t>(1, totals.unique)) << " %), "
      << std::setprecision(0) << totals.fetched / b << " fetched, " << totals.written / b << " written back, "
      << totals.critical / b << " critical sync, " << totals.delayed / b << " delayed sync, "
      << totals.private_rows / b << " private (" << run.row_bytes() << " bytes a row)\n"
      << "  bytes per batch: " << Bytes(totals.fetched * run.row_bytes() / b) << " fetched, "
      << Bytes(totals.written * run.row_bytes() / b) << " written back, "
      << Bytes((totals.critical + totals.delayed) * run.row_bytes() / b) << " synced (sparse rows)\n";
  uint64_t shard_rows = 0, shard_bytes = 0;
  if (auto usage = run.ShardUsages(); usage.ok()) {
    for (const trainer::ShardUsage& u : *usage) {
      shard_rows += u.rows;
      shard_bytes += u.bytes;
    }
    out << "  embedding shards: " << shard_rows << " rows resident in " << usage->size() << " shard(s), "
        << Bytes(static_cast<double>(shard_bytes)) << " (rows are created when training first touches them)\n";
  } else {
    err << "actorrec train: " << usage.status().message() << "\n";
  }
  std::string oracle_json;
  if (run.pipelined()) {
    if (auto stats = run.OracleStats(); stats.ok()) {
      out << "  oracle: " << stats->summary << "\n";
      oracle_json = stats->json;
    } else {
      err << "actorrec train: " << stats.status().message() << "\n";
    }
  }
  out << "  metrics: " << metrics_path << "\n" << std::defaultfloat;
  uint64_t digest = 0;
  if (code == kExitOk && !interrupted) {
    auto d = run.ParameterDigest();
    if (d.ok()) digest = *d;
  }
  if (!oracle_json.empty()) metrics << "{\"event\":\"oracle\",\"stats\":" << oracle_json << "}\n";
  metrics << "{\"event\":\"summary\",\"batches\":" << totals.batches << ",\"samples\":" << totals.samples
          << ",\"seconds\":" << train_s << ",\"samples_per_s\":" << totals.samples / std::max(train_s, 1e-9)
          << ",\"ms_per_batch\":" << PhaseJson(totals, per_batch)
          << ",\"shard_rows\":" << shard_rows << ",\"shard_bytes\":" << shard_bytes
          << ",\"fetched_bytes_per_batch\":" << totals.fetched * run.row_bytes() / b
          << ",\"written_bytes_per_batch\":" << totals.written * run.row_bytes() / b
          << ",\"synced_bytes_per_batch\":" << (totals.critical + totals.delayed) * run.row_bytes() / b
          << ",\"parameter_digest\":\"" << Hex64(digest) << "\"}\n";
  spdlog::info("train finished in {:.1f} s", std::chrono::duration<double>(Clock::now() - started).count());
  const int exit_code = interrupted ? 128 + g_stop_signal.load() : code;
  if (options.before_teardown) options.before_teardown(exit_code, interrupted ? g_stop_signal.load() : 0);
  return exit_code;
}

}  // namespace actorrec
