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
#include <mutex>
#include <string>
#include <vector>

namespace actorrec::inspector {

// What one global batch did (the drivers' StepReport, in ms).
struct BatchFigures {
  uint32_t epoch = 0;
  uint64_t batch = 0;  // in the epoch
  uint64_t samples = 0;
  double loss = 0;  // mean over the batch's samples
  uint64_t unique_rows = 0, missed_rows = 0, fetched_rows = 0, written_rows = 0;
  uint64_t critical_rows = 0, delayed_rows = 0, private_rows = 0;
  double fetch_ms = 0, forward_ms = 0, backward_ms = 0, dense_sync_ms = 0, exposed_delayed_ms = 0,
         optimizer_ms = 0, sparse_sync_ms = 0, write_back_ms = 0;
  double elapsed_s = 0;  // since the run began working
};

struct ActorRow {
  std::string member, host, name, role;
};

struct RunInfo {
  std::string name, model, mode, driver, backend;
  uint32_t trainers = 0, shards = 0;
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
  void AddBatch(const BatchFigures& b);
  void AddEval(uint64_t batches, double auc, double log_loss);
  // The oracle's statistics (PlanStats JSON), when the run has them.
  void SetOracle(const std::string& json);
  void SetDigest(const std::string& hex);

  // Changes with every write: a stream sends a snapshot only when it moved.
  uint64_t version() const;
  // The whole snapshot as one JSON object (docs/inspector.md lists its fields).
  std::string Json() const;
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

  mutable std::mutex mu_;
  uint64_t version_ = 0;
  RunInfo run_;
  std::vector<ActorRow> actors_;
  std::string state_ = "starting";
  std::string oracle_json_, digest_;
  // Totals of this attempt.
  uint64_t batches_ = 0, samples_ = 0, unique_ = 0, missed_ = 0, fetched_ = 0, written_ = 0;
  uint64_t critical_ = 0, delayed_ = 0, private_ = 0;
  double loss_sum_ = 0;
  BatchFigures last_;
  std::deque<BatchFigures> recent_;
  std::vector<CurvePoint> curve_;
  uint64_t stride_ = 1;         // batches per curve point
  double open_loss_ = 0;        // the point being filled
  uint64_t open_batches_ = 0;
  std::vector<Eval> evals_;
};

}  // namespace actorrec::inspector
