// The inspector's board: figures in, JSON and Prometheus text out.
#include "actors/inspector/board.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/json_number.hpp"

namespace actorrec::inspector {

void Board::SetRun(const RunInfo& run) {
  std::lock_guard lock(mu_);
  run_ = run;
  ++version_;
}

void Board::SetActors(std::vector<ActorRow> actors) {
  std::lock_guard lock(mu_);
  actors_ = std::move(actors);
  ++version_;
}

void Board::SetState(const std::string& state) {
  std::lock_guard lock(mu_);
  state_ = state;
  ++version_;
}

void Board::AddBatch(const BatchFigures& b) {
  std::lock_guard lock(mu_);
  ++batches_;
  samples_ += b.samples;
  loss_sum_ += b.loss * static_cast<double>(b.samples);
  unique_ += b.unique_rows;
  missed_ += b.missed_rows;
  fetched_ += b.fetched_rows;
  written_ += b.written_rows;
  critical_ += b.critical_rows;
  delayed_ += b.delayed_rows;
  private_ += b.private_rows;
  last_ = b;
  recent_.push_back(b);
  if (recent_.size() > kRecent) recent_.pop_front();
  open_loss_ += b.loss;
  if (++open_batches_ == stride_) {
    curve_.push_back({batches_, open_loss_ / static_cast<double>(open_batches_)});
    open_loss_ = 0;
    open_batches_ = 0;
    if (curve_.size() >= kCurvePoints) {
      // Halve the resolution: each pair of points becomes one.
      std::vector<CurvePoint> half;
      for (size_t i = 0; i + 1 < curve_.size(); i += 2) {
        half.push_back({curve_[i + 1].batches, (curve_[i].loss + curve_[i + 1].loss) / 2});
      }
      curve_ = std::move(half);
      stride_ *= 2;
    }
  }
  ++version_;
}

void Board::AddEval(uint64_t batches, double auc, double log_loss) {
  std::lock_guard lock(mu_);
  evals_.push_back({batches, auc, log_loss});
  ++version_;
}

void Board::SetOracle(const std::string& json) {
  std::lock_guard lock(mu_);
  oracle_json_ = json;
  ++version_;
}

void Board::SetDigest(const std::string& hex) {
  std::lock_guard lock(mu_);
  digest_ = hex;
  ++version_;
}

uint64_t Board::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

namespace {

void Phases(std::ostringstream& j, const BatchFigures& b) {
  j << "{\"batch\":" << b.batch << ",\"epoch\":" << b.epoch << ",\"loss\":" << JsonNum{b.loss}
    << ",\"fetch\":" << JsonNum{b.fetch_ms} << ",\"forward\":" << JsonNum{b.forward_ms}
    << ",\"backward\":" << JsonNum{b.backward_ms} << ",\"dense_sync\":" << JsonNum{b.dense_sync_ms}
    << ",\"exposed_delayed_sync\":" << JsonNum{b.exposed_delayed_ms} << ",\"optimizer\":" << JsonNum{b.optimizer_ms}
    << ",\"sparse_sync\":" << JsonNum{b.sparse_sync_ms} << ",\"write_back\":" << JsonNum{b.write_back_ms} << "}";
}

}  // namespace

std::string Board::Json() const {
  std::lock_guard lock(mu_);
  std::ostringstream j;
  j.precision(6);
  const double elapsed = last_.elapsed_s;
  const double rate = elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0;
  const uint64_t planned = run_.planned_batches;
  j << "{\"version\":" << version_ << ",\"state\":" << JsonString(state_);
  j << ",\"run\":{\"name\":" << JsonString(run_.name) << ",\"model\":" << JsonString(run_.model)
    << ",\"mode\":" << JsonString(run_.mode) << ",\"driver\":" << JsonString(run_.driver)
    << ",\"backend\":" << JsonString(run_.backend) << ",\"trainers\":" << run_.trainers
    << ",\"shards\":" << run_.shards << ",\"first_batch\":" << run_.first_batch
    << ",\"planned_batches\":" << planned << ",\"row_bytes\":" << run_.row_bytes << "}";
  j << ",\"progress\":{\"batches\":" << batches_ << ",\"global_batch\":" << run_.first_batch + batches_
    << ",\"epoch\":" << last_.epoch << ",\"samples\":" << samples_ << ",\"elapsed_s\":" << JsonNum{elapsed}
    << ",\"samples_per_s\":" << JsonNum{rate} << ",\"mean_loss\":"
    << JsonNum{samples_ ? loss_sum_ / static_cast<double>(samples_) : 0.0};
  if (planned != 0 && batches_ > 0) {
    const double eta = batches_ < planned ? elapsed / static_cast<double>(batches_) * static_cast<double>(planned - batches_) : 0;
    j << ",\"eta_s\":" << JsonNum{eta} << ",\"fraction\":"
      << JsonNum{std::min(1.0, static_cast<double>(batches_) / static_cast<double>(planned))};
  } else {
    j << ",\"eta_s\":null,\"fraction\":null";
  }
  j << "}";
  const double b = static_cast<double>(std::max<uint64_t>(1, batches_));
  j << ",\"cache\":{\"hit_share\":"
    << JsonNum{unique_ ? 1.0 - static_cast<double>(missed_) / static_cast<double>(unique_) : 0.0}
    << ",\"unique_per_batch\":" << JsonNum{unique_ / b} << ",\"missed_per_batch\":" << JsonNum{missed_ / b}
    << ",\"fetched_per_batch\":" << JsonNum{fetched_ / b} << ",\"written_per_batch\":" << JsonNum{written_ / b}
    << ",\"critical_per_batch\":" << JsonNum{critical_ / b} << ",\"delayed_per_batch\":" << JsonNum{delayed_ / b}
    << ",\"private_per_batch\":" << JsonNum{private_ / b} << "}";
  // Members and their actors, as a tree.
  j << ",\"members\":[";
  std::vector<std::string> members;
  for (const ActorRow& a : actors_) {
    if (std::find(members.begin(), members.end(), a.member) == members.end()) members.push_back(a.member);
  }
  for (size_t m = 0; m < members.size(); ++m) {
    std::string host;
    for (const ActorRow& a : actors_) {
      if (a.member == members[m]) host = a.host;
    }
    j << (m ? "," : "") << "{\"name\":" << JsonString(members[m]) << ",\"host\":" << JsonString(host)
      << ",\"actors\":[";
    bool first = true;
    for (const ActorRow& a : actors_) {
      if (a.member != members[m]) continue;
      j << (first ? "" : ",") << "{\"name\":" << JsonString(a.name) << ",\"role\":" << JsonString(a.role)
        << ",\"state\":" << JsonString(state_ == "training" || state_ == "evaluating" ? "running" : state_) << "}";
      first = false;
    }
    j << "]}";
  }
  j << "]";
  j << ",\"last_batch\":";
  Phases(j, last_);
  j << ",\"recent\":[";
  for (size_t i = 0; i < recent_.size(); ++i) {
    if (i) j << ",";
    Phases(j, recent_[i]);
  }
  j << "],\"loss_curve\":[";
  for (size_t i = 0; i < curve_.size(); ++i) {
    j << (i ? "," : "") << "[" << run_.first_batch + curve_[i].batches << "," << JsonNum{curve_[i].loss} << "]";
  }
  j << "],\"eval\":[";
  for (size_t i = 0; i < evals_.size(); ++i) {
    j << (i ? "," : "") << "{\"batches\":" << evals_[i].batches << ",\"auc\":" << JsonNum{evals_[i].auc}
      << ",\"log_loss\":" << JsonNum{evals_[i].log_loss} << "}";
  }
  j << "],\"oracle\":" << (oracle_json_.empty() ? "null" : oracle_json_);
  j << ",\"parameter_digest\":" << (digest_.empty() ? "null" : JsonString(digest_)) << "}";
  return j.str();
}

std::string Board::Text() const {
  std::lock_guard lock(mu_);
  std::ostringstream t;
  const double elapsed = last_.elapsed_s;
  const uint64_t planned = run_.planned_batches;
  char line[256];
  t << "actorrec " << run_.name << "  " << run_.model << " " << run_.mode << " (" << run_.driver << ", "
    << run_.trainers << " trainers, " << run_.shards << " shards)  state: " << state_ << "\n";
  std::snprintf(line, sizeof line, "batch %llu", static_cast<unsigned long long>(run_.first_batch + batches_));
  t << line;
  if (planned != 0) {
    std::snprintf(line, sizeof line, "/%llu (%.0f %%)", static_cast<unsigned long long>(run_.first_batch + planned),
                  100.0 * static_cast<double>(batches_) / static_cast<double>(planned));
    t << line;
  }
  std::snprintf(line, sizeof line, "  epoch %u  %.0f samples/s  loss %.4f", last_.epoch,
                elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0.0, last_.loss);
  t << line;
  if (planned != 0 && batches_ > 0 && batches_ < planned) {
    std::snprintf(line, sizeof line, "  ETA %.0f s",
                  elapsed / static_cast<double>(batches_) * static_cast<double>(planned - batches_));
    t << line;
  }
  t << "\n";
  if (!evals_.empty()) {
    std::snprintf(line, sizeof line, "eval after %llu batches: AUC %.4f, log-loss %.4f (%zu evaluations)\n",
                  static_cast<unsigned long long>(evals_.back().batches), evals_.back().auc, evals_.back().log_loss,
                  evals_.size());
    t << line;
  }
  std::snprintf(line, sizeof line,
                "last batch (ms): rows %.2f  forward %.2f  backward %.2f  dense+critical sync %.2f (exposed delayed "
                "%.2f)  optimizer %.2f\n",
                last_.fetch_ms, last_.forward_ms, last_.backward_ms, last_.dense_sync_ms, last_.exposed_delayed_ms,
                last_.optimizer_ms);
  t << line;
  const double b = static_cast<double>(std::max<uint64_t>(1, batches_));
  std::snprintf(line, sizeof line,
                "rows per batch: %.0f unique, %.0f missed (cache hit share %.1f %%), %.0f critical, %.0f delayed, "
                "%.0f private\n",
                unique_ / b, missed_ / b, unique_ ? 100.0 * (1.0 - static_cast<double>(missed_) / unique_) : 0.0,
                critical_ / b, delayed_ / b, private_ / b);
  t << line;
  if (!digest_.empty()) t << "parameter digest " << digest_ << "\n";
  std::string member;
  for (const ActorRow& a : actors_) {
    if (a.member != member) {
      member = a.member;
      t << "member " << member << " (" << a.host << "):";
    }
    t << " " << a.name;
  }
  if (!actors_.empty()) t << "\n";
  return t.str();
}

std::string Board::Prometheus() const {
  std::lock_guard lock(mu_);
  std::ostringstream p;
  p.precision(9);
  auto metric = [&](const char* name, const char* type, const char* help, double value) {
    p << "# HELP actorrec_" << name << " " << help << "\n# TYPE actorrec_" << name << " " << type << "\nactorrec_"
      << name << " " << JsonNum{value} << "\n";
  };
  const double elapsed = last_.elapsed_s;
  metric("batches_total", "counter", "Global batches trained in this attempt.", static_cast<double>(batches_));
  metric("samples_total", "counter", "Samples trained in this attempt.", static_cast<double>(samples_));
  metric("samples_per_second", "gauge", "Mean throughput since the run began working.",
         elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0);
  metric("loss", "gauge", "Mean loss of the last batch.", last_.loss);
  metric("unique_rows_total", "counter", "Distinct rows the batches touched.", static_cast<double>(unique_));
  metric("missed_rows_total", "counter", "Of those, rows in no cache.", static_cast<double>(missed_));
  metric("fetched_rows_total", "counter", "Rows moved shard to trainer.", static_cast<double>(fetched_));
  metric("written_rows_total", "counter", "Rows moved trainer to shard.", static_cast<double>(written_));
  metric("synced_critical_rows_total", "counter", "Rows all-reduced before the next batch.",
         static_cast<double>(critical_));
  metric("synced_delayed_rows_total", "counter", "Rows all-reduced in the background.", static_cast<double>(delayed_));
  if (!evals_.empty()) {
    metric("eval_auc", "gauge", "Held-out AUC of the last evaluation.", evals_.back().auc);
    metric("eval_log_loss", "gauge", "Held-out log-loss of the last evaluation.", evals_.back().log_loss);
  }
  p << "# HELP actorrec_phase_ms Wall time of the last batch's phases (slowest trainer).\n"
       "# TYPE actorrec_phase_ms gauge\n";
  const std::pair<const char*, double> phases[] = {
      {"fetch", last_.fetch_ms},       {"forward", last_.forward_ms},         {"backward", last_.backward_ms},
      {"dense_sync", last_.dense_sync_ms}, {"exposed_delayed_sync", last_.exposed_delayed_ms},
      {"optimizer", last_.optimizer_ms}, {"sparse_sync", last_.sparse_sync_ms}, {"write_back", last_.write_back_ms}};
  for (const auto& [name, ms] : phases) p << "actorrec_phase_ms{phase=\"" << name << "\"} " << JsonNum{ms} << "\n";
  return p.str();
}

}  // namespace actorrec::inspector
