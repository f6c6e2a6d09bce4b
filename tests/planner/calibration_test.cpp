// Calibrating the cost model from a run's metrics.jsonl: the reader on small
// files written here (good, bad, missing), and the fit on a trace whose
// figures are worked out by hand (docs/planner.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "planner/calibration.hpp"
#include "tests/planner/round_figures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace actorrec::planner;
using actorrec::planner::testing::Slow;
using actorrec::planner::testing::Two;
using actorrec::testing::TempDir;

namespace {

// A batch line as `actorrec train` writes it (the keys calibration reads,
// among others it skips).
std::string BatchLine(int b, double elapsed, double sync, double fetch = 0, int critical = 50) {
  return "{\"event\":\"batch\",\"epoch\":0,\"batch\":" + std::to_string(b) +
         ",\"samples\":100,\"loss\":0.5,\"critical_rows\":" + std::to_string(critical) +
         ",\"fetch_s\":" + std::to_string(fetch) + ",\"forward_s\":0.05,\"backward_s\":0.05,\"dense_sync_s\":" +
         std::to_string(sync) + ",\"exposed_delayed_s\":0,\"optimizer_s\":0.001,\"elapsed_s\":" +
         std::to_string(elapsed) + "}\n";
}

}  // namespace

TEST_CASE("the calibration reader keeps the last attempt's batch lines and skips other events", "[planner]") {
  const std::string text = "{\"event\":\"attempt\",\"first_batch\":0}\n" + BatchLine(0, 9, 9) +
                           "{\"event\":\"attempt\",\"first_batch\":1}\n" + BatchLine(1, 0.2, 0.045, 0.01) +
                           "\n" + BatchLine(2, 0.4, 0.05) + "{\"event\":\"summary\",\"batches\":2}\n";
  auto batches = ParseBatchTimes(text, "m.jsonl");
  REQUIRE(batches.ok());
  REQUIRE(batches->size() == 2);
  CHECK((*batches)[0].elapsed_s == Approx(0.2));
  CHECK((*batches)[0].fetch_s == Approx(0.01));
  CHECK((*batches)[0].dense_sync_s == Approx(0.045));
  CHECK((*batches)[0].critical_rows == 50);
  CHECK((*batches)[1].elapsed_s == Approx(0.4));
}

TEST_CASE("a bad or missing metrics file is an error naming the file and the line", "[planner]") {
  TempDir dir;
  SECTION("a batch line without a key") {
    std::string line = BatchLine(1, 0.2, 0.05);
    line.replace(line.find("\"dense_sync_s\""), 14, "\"sync_s\"");
    const std::string path = dir.Write("metrics.jsonl", BatchLine(0, 0.1, 0.05) + line);
    auto r = LoadBatchTimes(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(path + ":2:") != std::string::npos);
    CHECK(r.status().message().find("dense_sync_s") != std::string::npos);
  }
  SECTION("a line cut short (a killed run)") {
    std::string line = BatchLine(1, 0.2, 0.05);
    const std::string path = dir.Write("metrics.jsonl", BatchLine(0, 0.1, 0.05) + line.substr(0, 40));
    auto r = LoadBatchTimes(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(path + ":2: not a metrics event") != std::string::npos);
  }
  SECTION("a negative time") {
    const std::string path = dir.Write("metrics.jsonl", BatchLine(0, 0.1, -0.05));
    auto r = LoadBatchTimes(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(path + ":1:") != std::string::npos);
    CHECK(r.status().message().find("negative") != std::string::npos);
  }
  SECTION("no file") {
    auto r = LoadBatchTimes(dir.File("none.jsonl"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(dir.File("none.jsonl")) != std::string::npos);
  }
  SECTION("too few batches after the warmup") {
    MeasuredRun run{"short.jsonl", {BatchTimes{0.1, 0, 0.05, 0, 50}, BatchTimes{0.2, 0, 0.05, 0, 50}}};
    auto c = Calibrate({run}, 2, Two(), Slow());
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find("short.jsonl: 2 batch(es), none after the warmup of 2") != std::string::npos);
  }
}

TEST_CASE("calibration on a trace worked out by hand gives back its iteration", "[planner]") {
  // Every iteration 0.2 s; the model's sum of 1000 + 50 × 12 bytes is
  // 2 × 1600 / 1e6 + 2 ms = 5.2 ms; the longest sync phase 45.2 ms, so the
  // faster trainer waited 40 ms for the slower. Batch 0 is the warmup.
  TempDir dir;
  const std::string path = dir.Write("metrics.jsonl", BatchLine(0, 0.2, 0.5) + BatchLine(1, 0.4, 0.0452) +
                                                          BatchLine(2, 0.6, 0.0452) + BatchLine(3, 0.8, 0.0452));
  auto batches = LoadBatchTimes(path);
  REQUIRE(batches.ok());
  auto c = Calibrate({MeasuredRun{path, *batches}}, 1, Two(), Slow());
  REQUIRE(c.ok());
  CHECK(c->batches == 3);
  CHECK(c->iteration_s == Approx(0.2));
  CHECK(c->sum_s == Approx(0.0052));
  CHECK(c->range_s == Approx(0.04));
  // The slowest trainer: 0.2 − 0.0052; the mean one half the range less.
  CHECK(c->slowest_s == Approx(0.1948));
  CHECK(c->mean_compute_s == Approx(0.1748));
  // 50 samples × 1 MFLOP in 0.1748 s less the memory term's 12 µs.
  CHECK(c->trainer_flops == Approx(50e6 / 0.174788));
  // range = 2 σ E[max of 2] = 2 σ / √π.
  CHECK(c->spread == Approx(0.04 * std::sqrt(M_PI) / 2 / 0.1748));

  // The fitted profile predicts the calibrating run's iteration back.
  PlanRows rows;
  rows.critical = 50;
  const HardwareProfile fitted = Calibrated(Slow(), *c);
  const Prediction p = Predict(Mode::kLrpp, Two(), rows, fitted);
  CHECK(p.compute_s == Approx(0.1748));
  CHECK(p.straggler_s == Approx(0.02));
  CHECK(p.iteration_s == Approx(0.2));
}
