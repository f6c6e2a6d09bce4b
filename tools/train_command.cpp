#include "tools/train_command.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "actors/common/exit_codes.hpp"
#include "actors/trainer/lockstep_run.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_stop_signal{0};
extern "C" void OnStopSignal(int sig) {
  if (g_stop_signal.exchange(sig) != 0) std::_Exit(128 + sig);  // a second signal: now
}

struct Totals {
  uint64_t batches = 0, samples = 0;
  double loss_sum = 0;
  uint64_t unique = 0, missed = 0, fetched = 0, written = 0, critical = 0, delayed = 0, private_rows = 0;
  double fetch_s = 0, compute_s = 0, dense_sync_s = 0, sparse_sync_s = 0, write_back_s = 0;
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
    compute_s += r.compute_s;
    dense_sync_s += r.dense_sync_s;
    sparse_sync_s += r.sparse_sync_s;
    write_back_s += r.write_back_s;
  }
};

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

std::string EvalJson(uint64_t batches, const trainer::EvalReport& e) {
  std::ostringstream j;
  j << std::setprecision(9) << "{\"event\":\"eval\",\"batches\":" << batches << ",\"samples\":" << e.samples
    << ",\"auc\":" << e.auc << ",\"log_loss\":" << e.log_loss << ",\"accuracy\":" << e.accuracy << "}";
  return j.str();
}

}  // namespace

int TrainConfig(const config::Config& cfg, std::ostream& out, std::ostream& err) {
  const auto started = Clock::now();
  auto created = trainer::LockstepRun::Create(cfg);
  if (!created.ok()) {
    err << "actorrec train: " << created.status().message() << "\n";
    return kExitUsage;
  }
  trainer::LockstepRun& run = **created;
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

  g_stop_signal = 0;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);

  const uint64_t planned = PlannedBatches(cfg);
  const bool tty = isatty(STDERR_FILENO) != 0;
  Totals totals;
  double window_loss = 0;
  uint64_t window_samples = 0;
  auto last_print = Clock::now();
  const auto train_start = Clock::now();
  trainer::StepReport step;
  int code = kExitOk;
  auto evaluate = [&](const char* when) -> bool {
    auto eval = run.Evaluate(0);
    if (!eval.ok()) {
      err << (tty ? "\n" : "") << "actorrec train: evaluation failed: " << eval.status().message() << "\n";
      return false;
    }
    out << (tty ? "\r\033[K" : "") << "eval " << when << " after " << totals.batches << " batches: AUC "
        << std::fixed << std::setprecision(4) << eval->auc << ", log-loss " << eval->log_loss << ", accuracy "
        << eval->accuracy << std::defaultfloat << " (" << eval->samples << " samples)\n";
    metrics << EvalJson(totals.batches, *eval) << "\n";
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
            << ",\"private_rows\":" << step.private_rows << ",\"compute_s\":" << step.compute_s << "}\n";

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
  }

  const double train_s = std::chrono::duration<double>(Clock::now() - train_start).count();
  const double per_batch = 1e3 / std::max<uint64_t>(1, totals.batches);
  const double b = std::max<uint64_t>(1, totals.batches);
  out << std::fixed << std::setprecision(1) << "summary: " << totals.batches << " batches, " << totals.samples
      << " samples in " << train_s << " s: " << std::setprecision(0) << totals.samples / std::max(train_s, 1e-9)
      << " samples/s, mean loss " << std::setprecision(4) << totals.loss_sum / std::max<uint64_t>(1, totals.samples)
      << "\n"
      << std::setprecision(2) << "  per batch (ms): fetch " << totals.fetch_s * per_batch << ", forward+backward "
      << totals.compute_s * per_batch << ", dense sync " << totals.dense_sync_s * per_batch << ", sparse sync "
      << totals.sparse_sync_s * per_batch << ", write-back " << totals.write_back_s * per_batch << "\n"
      << std::setprecision(0) << "  rows per batch: " << totals.unique / b << " unique, " << totals.missed / b
      << " missed (cache hit share " << std::setprecision(1)
      << 100.0 * (1.0 - static_cast<double>(totals.missed) / std::max<uint64_t>(1, totals.unique)) << " %), "
      << std::setprecision(0) << totals.fetched / b << " fetched, " << totals.written / b << " written back, "
      << totals.critical / b << " critical sync, " << totals.delayed / b << " delayed sync, "
      << totals.private_rows / b << " private (" << run.row_bytes() << " bytes a row)\n"
      << "  metrics: " << metrics_path << "\n" << std::defaultfloat;
  metrics << "{\"event\":\"summary\",\"batches\":" << totals.batches << ",\"samples\":" << totals.samples
          << ",\"seconds\":" << train_s << ",\"samples_per_s\":" << totals.samples / std::max(train_s, 1e-9)
          << ",\"parameter_digest\":\"" << std::hex << (code == kExitOk && !interrupted ? run.ParameterDigest() : 0)
          << std::dec << "\"}\n";
  spdlog::info("train finished in {:.1f} s", std::chrono::duration<double>(Clock::now() - started).count());
  return interrupted ? 128 + g_stop_signal.load() : code;
}

}  // namespace actorrec
