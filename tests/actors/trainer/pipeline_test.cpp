// The actor pipeline (PipelineRun) against the lockstep reference: the same
// config ends with bitwise equal parameters, whatever the overlap of
// prefetch, sync and write-back did to the timing.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>

#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "tests/actors/trainer/test_config.hpp"

namespace actorrec::trainer {
namespace {

uint64_t TrainLockstep(const config::Config& cfg, int* batches) {
  auto run = LockstepRun::Create(cfg);
  REQUIRE(run.ok());
  StepReport step;
  *batches = 0;
  while (true) {
    auto more = (*run)->Step(&step);
    INFO(more.status().message());
    REQUIRE(more.ok());
    if (!*more) break;
    ++*batches;
  }
  REQUIRE((*run)->Finish().ok());
  return (*run)->ParameterDigest();
}

struct PipelineResult {
  uint64_t digest = 0;
  int batches = 0;
  double loss = 0;
};

PipelineResult TrainPipeline(const config::Config& cfg, PipelineRun::Options options = {}) {
  options.stall_seconds = 60;
  auto run = PipelineRun::Create(cfg, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  PipelineResult result;
  StepReport step;
  while (true) {
    auto more = (*run)->Step(&step);
    INFO(more.status().message());
    REQUIRE(more.ok());
    if (!*more) break;
    REQUIRE(step.batch == static_cast<uint64_t>(result.batches));
    result.loss += step.loss_sum;
    ++result.batches;
  }
  Status finished = (*run)->Finish();
  INFO(finished.message());
  REQUIRE(finished.ok());
  auto digest = (*run)->ParameterDigest();
  REQUIRE(digest.ok());
  result.digest = *digest;
  return result;
}

struct LockstepResult {
  uint64_t digest = 0;
  int batches = 0;
};

// The actor pipeline on `cfg` against the lockstep driver: as many batches
// and the same digest. Returns the lockstep run's.
LockstepResult CheckPipelineMatchesLockstep(const config::Config& cfg) {
  LockstepResult reference;
  reference.digest = TrainLockstep(cfg, &reference.batches);
  const PipelineResult got = TrainPipeline(cfg);
  CHECK(got.batches == reference.batches);
  CHECK(got.digest == reference.digest);
  return reference;
}

// The same config started with both drivers, side by side.
struct BothRuns {
  std::unique_ptr<LockstepRun> lockstep;
  std::unique_ptr<PipelineRun> pipeline;
};

BothRuns StartBoth(const Case& c, PipelineRun::Options options) {
  const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
  auto lockstep = LockstepRun::Create(cfg);
  REQUIRE(lockstep.ok());
  options.stall_seconds = 60;
  auto pipeline = PipelineRun::Create(cfg, options);
  INFO(pipeline.status().message());
  REQUIRE(pipeline.ok());
  return {std::move(lockstep).value(), std::move(pipeline).value()};
}

}  // namespace

TEST_CASE("the actor pipeline equals the lockstep run bitwise", "[trainer][pipeline]") {
  for (const char* mode : {"lrpp_delayed", "lrpp", "replicated"}) {
    for (int trainers : {1, 2, 4}) {
      for (int lookahead : {1, 3, 20}) {
        Case c;
        c.mode = mode;
        c.trainers = trainers;
        c.lookahead = lookahead;
        c.sparse = "adagrad";
        c.dense = "adam";
        const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
        CAPTURE(mode, trainers, lookahead);
        const LockstepResult reference = CheckPipelineMatchesLockstep(cfg);
        if (trainers > 1 && lookahead == 3) {
          // The trainers' sums over Gloo (as between processes) instead of
          // shared memory: the same bits.
          PipelineRun::Options gloo;
          gloo.gloo_in_process = true;
          CHECK(TrainPipeline(cfg, gloo).digest == reference.digest);
        }
      }
    }
  }
}

}  // namespace actorrec::trainer

namespace actorrec::trainer {

TEST_CASE("the pipeline pauses for evaluation and scores like the lockstep run", "[trainer][pipeline]") {
  Case c;
  c.mode = "lrpp_delayed";
  c.trainers = 2;
  c.lookahead = 4;
  PipelineRun::Options options;
  options.pause_every = 3;
  auto [lockstep, pipeline] = StartBoth(c, options);
  StepReport a, b;
  for (int batch = 1; batch <= 9; ++batch) {
    REQUIRE(*lockstep->Step(&a));
    auto more = pipeline->Step(&b);
    INFO(more.status().message());
    REQUIRE(*more);
    CHECK(a.loss_sum == b.loss_sum);
    CHECK(a.unique_rows == b.unique_rows);
    CHECK(a.fetched_rows == b.fetched_rows);
    CHECK(a.synced_delayed == b.synced_delayed);
    if (batch % 3 == 0) {
      auto x = lockstep->Evaluate(0);
      auto y = pipeline->Evaluate(0);
      INFO(y.status().message());
      REQUIRE(x.ok());
      REQUIRE(y.ok());
      CHECK(x->auc == y->auc);
      CHECK(x->log_loss == y->log_loss);
    } else {
      CHECK(pipeline->Evaluate(0).status().code() == Status::Code::kInvalidArgument);
    }
  }
}

TEST_CASE("an automatic L that ends its window early runs on the pipeline, equal to the lockstep run",
          "[trainer][pipeline]") {
  // The case of equivalence_test: L = 7 from the first 130 batches, the
  // window ended once later (the flush batch evicts every cached row and
  // its barrier is b − 1), then L = 6.
  Case c;
  c.batches = 300;
  c.trainers = 4;
  c.sparse = "adagrad";
  c.mode = "lrpp_delayed";
  c.lookahead = 0;
  c.cache_rows = 420;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
  CheckPipelineMatchesLockstep(cfg);
}

TEST_CASE("windows that end at batch after batch run on the pipeline, equal to the lockstep run",
          "[trainer][pipeline]") {
  // The cases of equivalence_test with 2 and 3 trainers: windows end early
  // several times (lrpp_delayed), or at every batch (replicated with 200
  // slots: each a flush from empty caches, barrier b − 1).
  struct Tight {
    int trainers;
    const char* mode;
    uint64_t cache_rows;
  };
  for (const Tight& t : {Tight{2, "lrpp_delayed", 180}, Tight{3, "replicated", 200}}) {
    Case c;
    c.trainers = t.trainers;
    c.batch_size = t.trainers == 3 ? 66 : 64;
    c.batches = 40;
    c.sparse = "adagrad";
    c.mode = t.mode;
    c.lookahead = 0;
    c.cache_rows = t.cache_rows;
    INFO("W=" << t.trainers << " " << t.mode);
    const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
    const LockstepResult reference = CheckPipelineMatchesLockstep(cfg);
    CHECK(reference.batches == 40);
  }
}

TEST_CASE("a cache too small stops the pipeline with the config key", "[trainer][pipeline]") {
  Case c;
  c.mode = "lrpp";
  c.cache_rows = 40;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
  PipelineRun::Options options;
  options.stall_seconds = 60;
  auto run = PipelineRun::Create(cfg, options);
  REQUIRE(run.ok());
  StepReport step;
  Result<bool> more = true;
  while (more.ok() && *more) more = (*run)->Step(&step);
  REQUIRE_FALSE(more.ok());
  CHECK_THAT(more.status().message(), Catch::Contains("training.cache_rows"));
}

TEST_CASE("the modes without lookahead run on the pipeline and equal the lockstep run bitwise",
          "[trainer][pipeline]") {
  for (const char* mode : {"no_cache", "static_hot", "ideal"}) {
    for (int trainers : {1, 2, 4}) {
      for (const char* sparse : {"adagrad", "adam"}) {
        Case c;
        c.mode = mode;
        c.trainers = trainers;
        c.sparse = sparse;
        c.dense = "adam";
        const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
        CAPTURE(mode, trainers, sparse);
        CheckPipelineMatchesLockstep(cfg);
      }
    }
  }
}

TEST_CASE("with dedup groups the pipeline (IKJT from the sampler, bag groups in the plans) equals the lockstep run",
          "[trainer][pipeline][dedup]") {
  for (const char* mode : {"lrpp_delayed", "no_cache", "ideal"}) {
    for (int trainers : {1, 2}) {
      for (bool dense : {false, true}) {  // dense: DLRM's bottom MLP per distinct tuple too
        Case c;
        c.mode = mode;
        c.trainers = trainers;
        c.sparse = "adagrad";
        c.session_length = 8;
        c.session_dup = "[0.95, 0.95, 0.6, 0.0]";
        c.dedup_groups = {"[0, 1]", "[2]"};
        if (dense) {
          c.session_dense_dup = 0.9;
          c.dedup_groups[0] += "\ndense = true";
        }
        const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
        CAPTURE(mode, trainers, dense);
        CheckPipelineMatchesLockstep(cfg);
      }
    }
  }
}

TEST_CASE("no_cache stops the pipeline naming training.cache_rows when a batch does not fit its staging slots",
          "[trainer][pipeline]") {
  Case c;
  c.mode = "no_cache";
  c.cache_rows = 16;
  auto run = PipelineRun::Create(config::ParseConfig(ConfigText(c), "pipeline.toml"));
  REQUIRE(run.ok());
  StepReport step;
  auto more = (*run)->Step(&step);
  REQUIRE_FALSE(more.ok());
  CHECK_THAT(more.status().message(), Catch::Contains("training.cache_rows"));
}

TEST_CASE("the shard actors report what they hold, the oracle its plan statistics", "[trainer][pipeline]") {
  Case c;
  c.mode = "lrpp_delayed";
  c.trainers = 2;
  auto [lockstep, pipeline] = StartBoth(c, {});
  // The actors answer while the run is busy (prefetch has started already).
  auto busy = pipeline->ShardUsages();
  REQUIRE(busy.ok());
  REQUIRE(busy->size() == pipeline->shards());
  StepReport step;
  while (*lockstep->Step(&step)) {
  }
  while (true) {
    auto more = pipeline->Step(&step);
    REQUIRE(more.ok());
    if (!*more) break;
  }
  REQUIRE(lockstep->Finish().ok());
  REQUIRE(pipeline->Finish().ok());
  // The oracle's plan statistics cover every batch it planned.
  auto stats = pipeline->OracleStats();
  REQUIRE(stats.ok());
  CHECK_THAT(stats->json, Catch::StartsWith("{\"batches\":" + std::to_string(c.batches) + ","));
  CHECK_THAT(stats->summary, Catch::StartsWith(std::to_string(c.batches) + " batches: "));
  auto got = pipeline->ShardUsages();
  auto want = lockstep->ShardUsages();
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  REQUIRE(got->size() == want->size());
  for (size_t s = 0; s < got->size(); ++s) {
    CAPTURE(s);
    CHECK((*got)[s].rows > 0);
    CHECK((*got)[s].rows == (*want)[s].rows);  // the same rows touched, whichever driver
    CHECK((*got)[s].bytes >= (*got)[s].rows * pipeline->row_bytes());
  }
}

}  // namespace actorrec::trainer

namespace actorrec::trainer {
namespace {

TEST_CASE("the pipeline's own actors register with the supervisor; one that dies ends the run naming it",
          "[trainer][pipeline]") {
  Case c;
  c.mode = "lrpp_delayed";
  c.trainers = 2;
  c.batches = 40;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "pipeline.toml");
  PipelineRun::Options options;
  options.stall_seconds = 120;  // the failure must show long before a stall would
  options.pause_every = 3;      // quiet after batch 2: no batch beyond it is planned before the kill
  auto run = PipelineRun::Create(cfg, options);
  REQUIRE(run.ok());
  std::ostringstream out;
  REQUIRE((*run)->StartControlPlane(cfg, out).ok());
  const size_t actors = 2 + cfg.cluster.TotalShards() + 3 * cfg.cluster.TotalTrainers();
  CHECK_THAT(out.str(), Catch::Contains(std::to_string(actors) + " role actors registered with the supervisor"));
  for (const char* name : {"trainer[1]", "cache_partition[0]", "sync_scheduler[1]", "embedding_shard[0]", "oracle"}) {
    CHECK_THAT(out.str(), Catch::Contains(name));
  }
  StepReport step;
  for (int b = 0; b < 3; ++b) REQUIRE(*(*run)->Step(&step));
  CHECK((*run)->InjectActorFailure("no_such_actor").code() == Status::Code::kNotFound);
  REQUIRE((*run)->InjectActorFailure("trainer[1]").ok());
  const auto killed = std::chrono::steady_clock::now();
  Result<bool> more = true;
  while (more.ok() && *more) more = (*run)->Step(&step);
  REQUIRE_FALSE(more.ok());
  CHECK_THAT(more.status().message(), Catch::Contains("actor trainer[1] stopped"));
  CHECK_THAT(more.status().message(), Catch::Contains("last completed batch"));
  CHECK(std::chrono::steady_clock::now() - killed < std::chrono::seconds(60));
}

}  // namespace
}  // namespace actorrec::trainer
