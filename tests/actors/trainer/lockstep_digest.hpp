// Trains a Case to its end on the lockstep driver (or the actor pipeline)
// and returns the parameter digest: what the equivalence tests (on the CPU, and on a GPU in
// tests/gpu/gpu_device_test.cpp) compare across modes.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "tests/actors/trainer/test_config.hpp"

namespace actorrec::trainer {

// Steps a run (LockstepRun, PipelineRun) to its end, or `limit` batches
// when limit >= 0, REQUIREing every step ok; returns the batches stepped.
template <class Run>
int StepAll(Run& run, int limit = -1) {
  StepReport step;
  int n = 0;
  while (limit < 0 || n < limit) {
    auto more = run.Step(&step);
    INFO(more.status().message());
    REQUIRE(more.ok());
    if (!*more) break;
    ++n;
  }
  return n;
}

// The parameter digest of the run; *report, if given: how L was chosen;
// *dense, if given: trainer 0's dense parameters at the end.
// `make_planner`, if given, plans the lookahead modes (LockstepRun::Create).
inline uint64_t LockstepDigest(const Case& c, std::string* report = nullptr,
                               const LockstepRun::PlannerFactory& make_planner = {},
                               std::vector<float>* dense = nullptr) {
  const config::Config cfg = config::ParseConfig(ConfigText(c), "equivalence.toml");
  auto run = LockstepRun::Create(cfg, make_planner);
  INFO(ConfigText(c));
  INFO(run.status().message());
  REQUIRE(run.ok());
  REQUIRE(StepAll(**run) == c.batches * c.epochs);
  REQUIRE((*run)->Finish().ok());
  if (report) *report = (*run)->lookahead_report();
  if (dense) dense->assign((*run)->dense_params(0).begin(), (*run)->dense_params(0).end());
  return (*run)->ParameterDigest();
}

// The same on the actor pipeline (PipelineRun).
inline uint64_t PipelineDigest(const Case& c) {
  const config::Config cfg = config::ParseConfig(ConfigText(c), "equivalence.toml");
  PipelineRun::Options options;
  options.stall_seconds = 60;
  auto run = PipelineRun::Create(cfg, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  StepAll(**run);
  REQUIRE((*run)->Finish().ok());
  auto digest = (*run)->ParameterDigest();
  REQUIRE(digest.ok());
  return *digest;
}

// Runs `c` in every mode against its no_cache run (the given c.mode is
// ignored) and CHECKs each digest equal: static_hot and ideal with a small
// cache (most rows fetched), the lookahead modes with L = 1 and 3. `label`
// names the case in failures.
inline void CheckEveryModeEqualsNoCache(Case c, const std::string& label) {
  c.mode = "no_cache";
  const uint64_t reference = LockstepDigest(c);
  for (const char* mode : {"static_hot", "ideal"}) {
    c.mode = mode;
    c.cache_rows = 512;
    INFO(label << " " << mode);
    CHECK(LockstepDigest(c) == reference);
  }
  c.cache_rows = 8192;
  for (const char* mode : {"lrpp_delayed", "lrpp", "replicated"}) {
    for (int l : {1, 3}) {
      c.mode = mode;
      c.lookahead = l;
      INFO(label << " " << mode << " L=" << l);
      CHECK(LockstepDigest(c) == reference);
    }
  }
}

}  // namespace actorrec::trainer
