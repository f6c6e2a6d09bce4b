// The inspector's board: what a running `train` shows live (progress, the
// phase breakdown of recent batches, loss and eval curves, cache and oracle
// figures, the actors), rendered as JSON and as Prometheus text. The
// functional core of the inspector service (inspector_service.hpp).
//
// Thread-safety: every method may be called from any thread. The training
// thread writes (one short lock and a copy per batch, nothing rendered);
// the server thread reads and renders, a few times a second.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/step_report.hpp"

namespace actorrec::inspector {

struct ActorRow {
  std::string member, host, name, role;
};

// An actor's message counters as read now (actors/common/actor_meter.hpp).
struct ActorCount {
  std::string name;
  uint64_t enqueued = 0, handled = 0;
};

// What an embedding shard holds (its residency).
struct ShardFigures {
  uint64_t rows = 0, bytes = 0;
};

// Messages per second of each actor: the slope of its handled count between
// two reads at least kWindow seconds apart (reads closer together keep the
// last rate, so many clients polling fast do not make it noisy).
class ActorRates {
 public:
  static constexpr double kWindow = 1.0;
  void Sample(const std::vector<ActorCount>& counts, double now_s);
  // Null until two reads kWindow apart.
  std::optional<double> Rate(const std::string& name) const;

 private:
  struct Last {
    double at_s = 0;
    uint64_t handled = 0;
    std::optional<double> rate;
  };
  std::map<std::string, Last> last_;
};

struct RunInfo {
  std::string name, model, mode, driver, backend;
  uint32_t trainers = 0, shards = 0;
  uint64_t cache_slots = 0;      // slots of each trainer's cache (0: unknown)
  uint64_t first_batch = 0;      // a resumed run's position
  uint64_t planned_batches = 0;  // this attempt's, 0: unknown
  uint64_t row_bytes = 0;
};

class Board {
 public:
  // How many recent batches the phase chart keeps, and how many points the
  // loss curve keeps before it halves its resolution (memory stays bounded
  // however long the run).
  static constexpr size_t kRecent = 240;
  static constexpr size_t kCurvePoints = 1024;

  void SetRun(const RunInfo& run);
  void SetActors(std::vector<ActorRow> actors);
  // "starting", "training", "evaluating", "finished", "failed", "stopped".
  void SetState(const std::string& state);
  // elapsed_s: since the run began working.
  void AddBatch(const trainer::StepReport& b, double elapsed_s);
  void AddEval(uint64_t batches, double auc, double log_loss);
  // The oracle's statistics (PlanStats JSON), when the run has them.
  void SetOracle(const std::string& json);
  void SetDigest(const std::string& hex);
  // Where the actors' message counters are read, at each render (any
  // thread; reads atomics only). Unset: no mailbox figures.
  void SetActorCounters(std::function<std::vector<ActorCount>()> read);
  // Each embedding shard's residency, refreshed now and then.
  void SetShards(std::vector<ShardFigures> shards);
  // The GEMM roofline of the run's trainers (GFLOP/s of sgemm on the
  // model's MLP shapes, measured as train_bench measures it) and the model's
  // GEMM FLOPs per sample: the board then shows the GEMM rate against it.
  void SetGemm(double roofline_gflops, double flops_per_sample);

  // Changes with every write: a stream sends a snapshot only when it moved.
  uint64_t version() const;
  // The whole snapshot as one JSON object (docs/inspector.md lists its fields).
  std::string Json() const;
  // The trainers', shards' and GEMM figures of the snapshot as one JSON
  // object ({"trainers":[…],"shards":[…],"gemm":…}): what a run's
  // metrics.jsonl keeps of them at its end, for the report.
  std::string PartsJson() const;
  // The essentials as plain text lines (`actorrec inspect`'s view).
  std::string Text() const;
  // Prometheus text exposition (version 0.0.4) of the counters and gauges.
  std::string Prometheus() const;

 private:
  struct CurvePoint {
    uint64_t batches;  // batches trained when the point closed
    double loss;       // mean over the point's batches
  };
  struct Eval {
    uint64_t batches;
    double auc, log_loss;
  };

  // Totals of one trainer over this attempt.
  struct TrainerTotals {
    uint64_t rows = 0, read_misses = 0, fetched = 0, written = 0, sync_floats = 0;
  };
  // Reads the actors' counters into counts_ and rates_ (mu_ held).
  void ReadActors() const;
  // The rendered parts of the snapshot (called with mu_ held).
  void ActorsJson(std::ostream& j) const;
  void PartsJson(std::ostream& j) const;  // ,"trainers":…,"shards":…,"gemm":…
  void TrainersJson(std::ostream& j) const;
  void GemmJson(std::ostream& j) const;
  double GemmGflops() const;  // achieved, over the attempt

  mutable std::mutex mu_;
  uint64_t version_ = 0;
  RunInfo run_;
  std::vector<ActorRow> actors_;
  std::string state_ = "starting";
  std::string oracle_json_, digest_;
  // Totals of this attempt.
  trainer::StepTotals totals_;
  trainer::StepReport last_;
  double elapsed_s_ = 0;  // since the run began working, at the last batch
  std::deque<trainer::StepReport> recent_;  // without their per-trainer figures
  std::vector<TrainerTotals> trainer_totals_;
  std::function<std::vector<ActorCount>()> read_actors_;
  mutable ActorRates rates_;
  mutable std::vector<ActorCount> counts_;  // the last read, for the render under way
  std::vector<ShardFigures> shards_;
  double roofline_gflops_ = 0, flops_per_sample_ = 0;
  std::vector<CurvePoint> curve_;
  uint64_t stride_ = 1;         // batches per curve point
  double open_loss_ = 0;        // the point being filled
  uint64_t open_batches_ = 0;
  std::vector<Eval> evals_;
};

}  // namespace actorrec::inspector
