// The inspector's board: figures in, JSON and Prometheus text out.
#include "actors/inspector/board.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/json_number.hpp"

namespace actorrec::inspector {
namespace {

double MeanLoss(const trainer::StepReport& b) {
  return b.loss_sum / static_cast<double>(std::max<uint64_t>(1, b.samples));
}

double Share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

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

void Board::AddBatch(const trainer::StepReport& b, double elapsed_s) {
  std::lock_guard lock(mu_);
  totals_.Add(b);
  if (trainer_totals_.size() < b.trainers.size()) trainer_totals_.resize(b.trainers.size());
  for (size_t w = 0; w < b.trainers.size(); ++w) {
    const trainer::TrainerFigures& t = b.trainers[w];
    TrainerTotals& total = trainer_totals_[w];
    total.rows += t.rows;
    total.read_misses += t.read_misses;
    total.fetched += t.fetched;
    total.written += t.written;
    total.sync_floats += t.sync_floats;
  }
  last_ = b;
  elapsed_s_ = elapsed_s;
  recent_.push_back(b);
  recent_.back().trainers.clear();
  if (recent_.size() > kRecent) recent_.pop_front();
  const double loss = MeanLoss(b);
  open_loss_ += loss;
  if (++open_batches_ == stride_) {
    curve_.push_back({totals_.batches, open_loss_ / static_cast<double>(open_batches_)});
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

void Board::SetActorCounters(std::function<std::vector<ActorCount>()> read) {
  std::lock_guard lock(mu_);
  read_actors_ = std::move(read);
  ++version_;
}

void Board::SetShards(std::vector<ShardFigures> shards) {
  std::lock_guard lock(mu_);
  shards_ = std::move(shards);
  ++version_;
}

void Board::SetGemm(double roofline_gflops, double flops_per_sample) {
  std::lock_guard lock(mu_);
  roofline_gflops_ = roofline_gflops;
  flops_per_sample_ = flops_per_sample;
  ++version_;
}

void ActorRates::Sample(const std::vector<ActorCount>& counts, double now_s) {
  for (const ActorCount& c : counts) {
    auto [it, fresh] = last_.try_emplace(c.name);
    Last& l = it->second;
    if (fresh) {
      l.at_s = now_s;
      l.handled = c.handled;
      continue;
    }
    if (now_s - l.at_s < kWindow) continue;
    l.rate = static_cast<double>(c.handled >= l.handled ? c.handled - l.handled : 0) / (now_s - l.at_s);
    l.at_s = now_s;
    l.handled = c.handled;
  }
}

std::optional<double> ActorRates::Rate(const std::string& name) const {
  auto it = last_.find(name);
  return it == last_.end() ? std::nullopt : it->second.rate;
}

void Board::ReadActors() const {
  if (!read_actors_) return;
  counts_ = read_actors_();
  rates_.Sample(counts_, std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

uint64_t Board::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

namespace {

void Phases(std::ostringstream& j, const trainer::StepReport& b) {
  j << "{\"batch\":" << b.batch << ",\"epoch\":" << b.epoch << ",\"loss\":" << JsonNum{MeanLoss(b)}
    << ",\"fetch\":" << JsonNum{b.fetch_s * 1e3} << ",\"forward\":" << JsonNum{b.forward_s * 1e3}
    << ",\"backward\":" << JsonNum{b.backward_s * 1e3} << ",\"dense_sync\":" << JsonNum{b.dense_sync_s * 1e3}
    << ",\"exposed_delayed_sync\":" << JsonNum{b.exposed_delayed_s * 1e3}
    << ",\"optimizer\":" << JsonNum{b.optimizer_s * 1e3} << ",\"sparse_sync\":" << JsonNum{b.sparse_sync_s * 1e3}
    << ",\"write_back\":" << JsonNum{b.write_back_s * 1e3} << "}";
}

}  // namespace

void Board::ActorsJson(std::ostream& j) const {
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
        << ",\"state\":" << JsonString(state_ == "training" || state_ == "evaluating" ? "running" : state_);
      // Its mailbox, where this process counts its messages (null: another
      // process hosts it, or it is not metered).
      auto c = std::find_if(counts_.begin(), counts_.end(), [&](const ActorCount& x) { return x.name == a.name; });
      if (c != counts_.end()) {
        const auto rate = rates_.Rate(a.name);
        j << ",\"mailbox\":" << (c->enqueued > c->handled ? c->enqueued - c->handled : 0)
          << ",\"messages\":" << c->handled << ",\"messages_per_s\":";
        if (rate) {
          j << JsonNum{*rate};
        } else {
          j << "null";
        }
      } else {
        j << ",\"mailbox\":null,\"messages\":null,\"messages_per_s\":null";
      }
      j << "}";
      first = false;
    }
    j << "]}";
  }
  j << "]";
}

void Board::TrainersJson(std::ostream& j) const {
  // Each trainer's cache partition and its current plan (the last batch's),
  // and the bytes it moved over this attempt: rows shards → partition and
  // partition → shards, floats to its sync scheduler's collective.
  j << ",\"trainers\":[";
  for (size_t w = 0; w < last_.trainers.size(); ++w) {
    const trainer::TrainerFigures& t = last_.trainers[w];
    const TrainerTotals total = w < trainer_totals_.size() ? trainer_totals_[w] : TrainerTotals{};
    j << (w ? "," : "") << "{\"trainer\":" << w << ",\"partition\":{\"occupancy\":" << t.occupancy
      << ",\"slots\":" << run_.cache_slots << ",\"occupancy_share\":";
    if (run_.cache_slots) {
      j << JsonNum{Share(t.occupancy, run_.cache_slots)};
    } else {
      j << "null";
    }
    j << ",\"hit_share\":" << JsonNum{total.rows ? 1.0 - Share(total.read_misses, total.rows) : 0.0}
      << ",\"last_hit_share\":" << JsonNum{t.rows ? 1.0 - Share(t.read_misses, t.rows) : 0.0} << "}";
    j << ",\"plan\":{\"batch\":" << last_.batch << ",\"epoch\":" << last_.epoch << ",\"lookahead\":" << t.lookahead
      << ",\"rows\":" << t.rows << ",\"misses\":" << t.read_misses << ",\"fetched\":" << t.fetched << ",\"private_misses\":" << t.private_misses
      << ",\"critical\":" << t.critical << ",\"delayed\":" << t.delayed << ",\"private\":" << t.private_rows
      << ",\"evictions\":" << t.evictions << ",\"written\":" << t.written
      << ",\"wait_rows_ms\":" << JsonNum{t.wait_rows_s * 1e3} << ",\"forward_ms\":" << JsonNum{t.forward_s * 1e3}
      << ",\"backward_ms\":" << JsonNum{t.backward_s * 1e3}
      << ",\"sync_exposed_ms\":" << JsonNum{t.critical_sync_s * 1e3}
      << ",\"exposed_delayed_ms\":" << JsonNum{t.exposed_delayed_s * 1e3}
      << ",\"sync_hidden_ms\":" << JsonNum{t.delayed_sync_s * 1e3} << ",\"apply_ms\":" << JsonNum{t.apply_s * 1e3}
      << "}";
    j << ",\"bytes\":{\"shards_to_partition\":" << total.fetched * run_.row_bytes
      << ",\"partition_to_shards\":" << total.written * run_.row_bytes
      << ",\"sync\":" << total.sync_floats * sizeof(float) << "}}";
  }
  j << "]";
}

void Board::PartsJson(std::ostream& j) const {
  TrainersJson(j);
  j << ",\"shards\":[";
  for (size_t i = 0; i < shards_.size(); ++i) {
    j << (i ? "," : "") << "{\"shard\":" << i << ",\"rows\":" << shards_[i].rows << ",\"bytes\":" << shards_[i].bytes
      << "}";
  }
  j << "]";
  GemmJson(j);
}

std::string Board::PartsJson() const {
  std::lock_guard lock(mu_);
  std::ostringstream j;
  j.precision(6);
  PartsJson(j);
  std::string out = j.str();
  out[0] = '{';  // in place of the leading comma
  out += '}';
  return out;
}

double Board::GemmGflops() const {
  return elapsed_s_ > 0 ? static_cast<double>(totals_.samples) * flops_per_sample_ / elapsed_s_ / 1e9 : 0.0;
}

void Board::GemmJson(std::ostream& j) const {
  j << ",\"gemm\":";
  if (roofline_gflops_ <= 0) {
    j << "null";
    return;
  }
  // Over the attempt: the model's GEMM FLOPs at the run's samples/s; while
  // computing: the last batch's over its slowest trainer's forward+backward.
  const double compute_s = last_.forward_s + last_.backward_s;
  const double compute = compute_s > 0 ? static_cast<double>(last_.samples) * flops_per_sample_ / compute_s / 1e9 : 0.0;
  j << "{\"roofline_gflops\":" << JsonNum{roofline_gflops_} << ",\"flops_per_sample\":" << std::llround(flops_per_sample_)
    << ",\"gflops\":" << JsonNum{GemmGflops()} << ",\"of_roofline\":" << JsonNum{GemmGflops() / roofline_gflops_}
    << ",\"compute_gflops\":" << JsonNum{compute} << ",\"compute_of_roofline\":"
    << JsonNum{compute / roofline_gflops_} << "}";
}

std::string Board::Json() const {
  std::lock_guard lock(mu_);
  ReadActors();
  std::ostringstream j;
  j.precision(6);
  const double elapsed = elapsed_s_;
  const double rate = elapsed > 0 ? static_cast<double>(totals_.samples) / elapsed : 0;
  const uint64_t planned = run_.planned_batches;
  j << "{\"version\":" << version_ << ",\"state\":" << JsonString(state_);
  j << ",\"run\":{\"name\":" << JsonString(run_.name) << ",\"model\":" << JsonString(run_.model)
    << ",\"mode\":" << JsonString(run_.mode) << ",\"driver\":" << JsonString(run_.driver)
    << ",\"backend\":" << JsonString(run_.backend) << ",\"trainers\":" << run_.trainers
    << ",\"shards\":" << run_.shards << ",\"cache_slots\":" << run_.cache_slots << ",\"first_batch\":" << run_.first_batch
    << ",\"planned_batches\":" << planned << ",\"row_bytes\":" << run_.row_bytes << "}";
  j << ",\"progress\":{\"batches\":" << totals_.batches << ",\"global_batch\":" << run_.first_batch + totals_.batches
    << ",\"epoch\":" << last_.epoch << ",\"samples\":" << totals_.samples << ",\"elapsed_s\":" << JsonNum{elapsed}
    << ",\"samples_per_s\":" << JsonNum{rate} << ",\"mean_loss\":"
    << JsonNum{totals_.samples ? totals_.loss_sum / static_cast<double>(totals_.samples) : 0.0};
  if (planned != 0 && totals_.batches > 0) {
    const double eta = totals_.batches < planned ? elapsed / static_cast<double>(totals_.batches) * static_cast<double>(planned - totals_.batches) : 0;
    j << ",\"eta_s\":" << JsonNum{eta} << ",\"fraction\":"
      << JsonNum{std::min(1.0, static_cast<double>(totals_.batches) / static_cast<double>(planned))};
  } else {
    j << ",\"eta_s\":null,\"fraction\":null";
  }
  j << "}";
  const double b = static_cast<double>(std::max<uint64_t>(1, totals_.batches));
  j << ",\"cache\":{\"hit_share\":"
    << JsonNum{totals_.unique ? 1.0 - static_cast<double>(totals_.missed) / static_cast<double>(totals_.unique) : 0.0}
    << ",\"unique_per_batch\":" << JsonNum{totals_.unique / b} << ",\"missed_per_batch\":" << JsonNum{totals_.missed / b}
    << ",\"fetched_per_batch\":" << JsonNum{totals_.fetched / b} << ",\"written_per_batch\":" << JsonNum{totals_.written / b}
    << ",\"critical_per_batch\":" << JsonNum{totals_.critical / b} << ",\"delayed_per_batch\":" << JsonNum{totals_.delayed / b}
    << ",\"private_per_batch\":" << JsonNum{totals_.private_rows / b} << "}";
  // Members and their actors, as a tree.
  ActorsJson(j);
  PartsJson(j);
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
  ReadActors();
  std::ostringstream t;
  const double elapsed = elapsed_s_;
  const uint64_t planned = run_.planned_batches;
  char line[256];
  t << "actorrec " << run_.name << "  " << run_.model << " " << run_.mode << " (" << run_.driver << ", "
    << run_.trainers << " trainers, " << run_.shards << " shards)  state: " << state_ << "\n";
  std::snprintf(line, sizeof line, "batch %llu", static_cast<unsigned long long>(run_.first_batch + totals_.batches));
  t << line;
  if (planned != 0) {
    std::snprintf(line, sizeof line, "/%llu (%.0f %%)", static_cast<unsigned long long>(run_.first_batch + planned),
                  100.0 * static_cast<double>(totals_.batches) / static_cast<double>(planned));
    t << line;
  }
  std::snprintf(line, sizeof line, "  epoch %u  %.0f samples/s  loss %.4f", last_.epoch,
                elapsed > 0 ? static_cast<double>(totals_.samples) / elapsed : 0.0, MeanLoss(last_));
  t << line;
  if (planned != 0 && totals_.batches > 0 && totals_.batches < planned) {
    std::snprintf(line, sizeof line, "  ETA %.0f s",
                  elapsed / static_cast<double>(totals_.batches) * static_cast<double>(planned - totals_.batches));
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
                last_.fetch_s * 1e3, last_.forward_s * 1e3, last_.backward_s * 1e3, last_.dense_sync_s * 1e3, last_.exposed_delayed_s * 1e3,
                last_.optimizer_s * 1e3);
  t << line;
  const double b = static_cast<double>(std::max<uint64_t>(1, totals_.batches));
  std::snprintf(line, sizeof line,
                "rows per batch: %.0f unique, %.0f missed (cache hit share %.1f %%), %.0f critical, %.0f delayed, "
                "%.0f private\n",
                totals_.unique / b, totals_.missed / b, totals_.unique ? 100.0 * (1.0 - static_cast<double>(totals_.missed) / totals_.unique) : 0.0,
                totals_.critical / b, totals_.delayed / b, totals_.private_rows / b);
  t << line;
  for (size_t w = 0; w < last_.trainers.size(); ++w) {
    const trainer::TrainerFigures& x = last_.trainers[w];
    const TrainerTotals total = w < trainer_totals_.size() ? trainer_totals_[w] : TrainerTotals{};
    std::snprintf(line, sizeof line,
                  "trainer[%zu]: cache %u/%llu slots, hit %.1f %%; plan L %u: %llu rows, %llu fetched, %llu critical, "
                  "%llu delayed, %llu private, %llu evicted; waited %.2f ms, sync exposed %.2f hidden %.2f ms; "
                  "moved %.1f MB in, %.1f MB out, %.1f MB sync\n",
                  w, x.occupancy, static_cast<unsigned long long>(run_.cache_slots),
                  total.rows ? 100.0 * (1.0 - Share(total.read_misses, total.rows)) : 0.0, x.lookahead,
                  static_cast<unsigned long long>(x.rows), static_cast<unsigned long long>(x.fetched),
                  static_cast<unsigned long long>(x.critical), static_cast<unsigned long long>(x.delayed),
                  static_cast<unsigned long long>(x.private_rows), static_cast<unsigned long long>(x.evictions),
                  x.wait_rows_s * 1e3, x.critical_sync_s * 1e3, x.delayed_sync_s * 1e3,
                  static_cast<double>(total.fetched * run_.row_bytes) / 1e6,
                  static_cast<double>(total.written * run_.row_bytes) / 1e6,
                  static_cast<double>(total.sync_floats * sizeof(float)) / 1e6);
    t << line;
  }
  if (!shards_.empty()) {
    t << "shards:";
    for (size_t i = 0; i < shards_.size(); ++i) {
      std::snprintf(line, sizeof line, " [%zu] %llu rows %.1f MB", i, static_cast<unsigned long long>(shards_[i].rows),
                    static_cast<double>(shards_[i].bytes) / 1e6);
      t << line;
    }
    t << "\n";
  }
  if (roofline_gflops_ > 0) {
    std::snprintf(line, sizeof line, "GEMM %.1f GFLOP/s of a %.1f GFLOP/s roofline (%.1f %%)\n", GemmGflops(),
                  roofline_gflops_, 100.0 * GemmGflops() / roofline_gflops_);
    t << line;
  }
  if (!digest_.empty()) t << "parameter digest " << digest_ << "\n";
  std::string member;
  for (const ActorRow& a : actors_) {
    if (a.member != member) {
      if (!member.empty()) t << "\n";
      member = a.member;
      t << "member " << member << " (" << a.host << "):";
    }
    t << " " << a.name;
    // Its mailbox depth and messages per second, where counted here.
    auto c = std::find_if(counts_.begin(), counts_.end(), [&](const ActorCount& x) { return x.name == a.name; });
    if (c != counts_.end()) {
      const auto rate = rates_.Rate(a.name);
      const unsigned long long queued = c->enqueued > c->handled ? c->enqueued - c->handled : 0;
      if (rate) {
        std::snprintf(line, sizeof line, " (%llu queued, %.0f/s)", queued, *rate);
      } else {
        std::snprintf(line, sizeof line, " (%llu queued)", queued);
      }
      t << line;
    }
  }
  if (!actors_.empty()) t << "\n";
  return t.str();
}

std::string Board::Prometheus() const {
  std::lock_guard lock(mu_);
  ReadActors();
  std::ostringstream p;
  p.precision(9);
  auto metric = [&](const char* name, const char* type, const char* help, double value) {
    p << "# HELP actorrec_" << name << " " << help << "\n# TYPE actorrec_" << name << " " << type << "\nactorrec_"
      << name << " " << JsonNum{value} << "\n";
  };
  const double elapsed = elapsed_s_;
  metric("batches_total", "counter", "Global batches trained in this attempt.", static_cast<double>(totals_.batches));
  metric("samples_total", "counter", "Samples trained in this attempt.", static_cast<double>(totals_.samples));
  metric("samples_per_second", "gauge", "Mean throughput since the run began working.",
         elapsed > 0 ? static_cast<double>(totals_.samples) / elapsed : 0);
  metric("loss", "gauge", "Mean loss of the last batch.", MeanLoss(last_));
  metric("unique_rows_total", "counter", "Distinct rows the batches touched.", static_cast<double>(totals_.unique));
  metric("missed_rows_total", "counter", "Of those, rows in no cache.", static_cast<double>(totals_.missed));
  metric("fetched_rows_total", "counter", "Rows moved shard to trainer.", static_cast<double>(totals_.fetched));
  metric("written_rows_total", "counter", "Rows moved trainer to shard.", static_cast<double>(totals_.written));
  metric("synced_critical_rows_total", "counter", "Rows all-reduced before the next batch.",
         static_cast<double>(totals_.critical));
  metric("synced_delayed_rows_total", "counter", "Rows all-reduced in the background.", static_cast<double>(totals_.delayed));
  if (!evals_.empty()) {
    metric("eval_auc", "gauge", "Held-out AUC of the last evaluation.", evals_.back().auc);
    metric("eval_log_loss", "gauge", "Held-out log-loss of the last evaluation.", evals_.back().log_loss);
  }
  p << "# HELP actorrec_phase_ms Wall time of the last batch's phases (slowest trainer).\n"
       "# TYPE actorrec_phase_ms gauge\n";
  const std::pair<const char*, double> phases[] = {
      {"fetch", last_.fetch_s * 1e3},       {"forward", last_.forward_s * 1e3},         {"backward", last_.backward_s * 1e3},
      {"dense_sync", last_.dense_sync_s * 1e3}, {"exposed_delayed_sync", last_.exposed_delayed_s * 1e3},
      {"optimizer", last_.optimizer_s * 1e3}, {"sparse_sync", last_.sparse_sync_s * 1e3}, {"write_back", last_.write_back_s * 1e3}};
  for (const auto& [name, ms] : phases) p << "actorrec_phase_ms{phase=\"" << name << "\"} " << JsonNum{ms} << "\n";
  // Labelled families: one HELP/TYPE, then a line per actor, trainer or shard.
  auto family = [&](const char* name, const char* type, const char* help) {
    p << "# HELP actorrec_" << name << " " << help << "\n# TYPE actorrec_" << name << " " << type << "\n";
  };
  if (!counts_.empty()) {
    family("actor_mailbox_depth", "gauge", "Messages waiting in the actor's mailbox.");
    for (const ActorCount& c : counts_) {
      p << "actorrec_actor_mailbox_depth{actor=\"" << c.name << "\"} " << (c.enqueued > c.handled ? c.enqueued - c.handled : 0)
        << "\n";
    }
    family("actor_messages_total", "counter", "Messages the actor handled.");
    for (const ActorCount& c : counts_) p << "actorrec_actor_messages_total{actor=\"" << c.name << "\"} " << c.handled << "\n";
    family("actor_messages_per_second", "gauge", "Messages the actor handled per second, over the last second or more.");
    for (const ActorCount& c : counts_) {
      if (auto rate = rates_.Rate(c.name)) {
        p << "actorrec_actor_messages_per_second{actor=\"" << c.name << "\"} " << JsonNum{*rate} << "\n";
      }
    }
  }
  if (!last_.trainers.empty()) {
    family("cache_occupancy_slots", "gauge", "Slots of the trainer's cache its current plan holds.");
    for (size_t w = 0; w < last_.trainers.size(); ++w) {
      p << "actorrec_cache_occupancy_slots{trainer=\"" << w << "\"} " << last_.trainers[w].occupancy << "\n";
    }
    if (run_.cache_slots) {
      family("cache_slots", "gauge", "Slots of each trainer's cache.");
      p << "actorrec_cache_slots " << run_.cache_slots << "\n";
    }
    family("cache_hit_share", "gauge", "Share of the rows the trainer read that its cache held (this attempt).");
    for (size_t w = 0; w < trainer_totals_.size(); ++w) {
      const TrainerTotals& t = trainer_totals_[w];
      p << "actorrec_cache_hit_share{trainer=\"" << w << "\"} " << JsonNum{t.rows ? 1.0 - Share(t.read_misses, t.rows) : 0.0}
        << "\n";
    }
    family("link_bytes_total", "counter", "Bytes moved per link: rows shards to partition, partition to shards, sync.");
    for (size_t w = 0; w < trainer_totals_.size(); ++w) {
      const TrainerTotals& t = trainer_totals_[w];
      p << "actorrec_link_bytes_total{trainer=\"" << w << "\",link=\"shards_to_partition\"} " << t.fetched * run_.row_bytes
        << "\nactorrec_link_bytes_total{trainer=\"" << w << "\",link=\"partition_to_shards\"} "
        << t.written * run_.row_bytes << "\nactorrec_link_bytes_total{trainer=\"" << w << "\",link=\"sync\"} "
        << t.sync_floats * sizeof(float) << "\n";
    }
  }
  if (!shards_.empty()) {
    family("shard_rows", "gauge", "Rows the embedding shard holds.");
    for (size_t i = 0; i < shards_.size(); ++i) p << "actorrec_shard_rows{shard=\"" << i << "\"} " << shards_[i].rows << "\n";
    family("shard_bytes", "gauge", "Bytes of row state the embedding shard holds.");
    for (size_t i = 0; i < shards_.size(); ++i) p << "actorrec_shard_bytes{shard=\"" << i << "\"} " << shards_[i].bytes << "\n";
  }
  if (roofline_gflops_ > 0) {
    metric("gemm_gflops", "gauge", "The model's GEMM FLOPs at the run's samples/s.", GemmGflops());
    metric("gemm_roofline_gflops", "gauge", "sgemm on the model's shapes, measured at start.", roofline_gflops_);
  }
  return p.str();
}

}  // namespace actorrec::inspector
