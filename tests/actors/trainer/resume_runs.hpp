// A run straight through and the same run stopped after `stop` batches,
// checkpointed and resumed, on either driver: what the resume tests (on the
// CPU, and on a device in tests/actors/trainer/device_matrix.hpp) compare.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "tests/actors/trainer/lockstep_digest.hpp"

namespace actorrec::trainer {

inline uint64_t Straight(const config::Config& cfg) {
  auto run = LockstepRun::Create(cfg);
  REQUIRE(run.ok());
  StepAll(**run);
  REQUIRE((*run)->Finish().ok());
  return (*run)->ParameterDigest();
}

inline uint64_t LockstepResumed(const config::Config& cfg, int stop, const std::string& dir) {
  {
    auto run = LockstepRun::Create(cfg);
    REQUIRE(run.ok());
    REQUIRE(StepAll(**run, stop) == stop);
    Status saved = (*run)->SaveCheckpoint(dir);
    INFO(saved.ToString());
    REQUIRE(saved.ok());
  }
  auto run = LockstepRun::Resume(cfg, dir);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  CHECK((*run)->first_batch() == static_cast<uint64_t>(stop));
  StepAll(**run);
  REQUIRE((*run)->Finish().ok());
  return (*run)->ParameterDigest();
}

inline uint64_t PipelineResumed(const config::Config& cfg, int stop, const std::string& dir) {
  {
    PipelineRun::Options options;
    options.pause_every = static_cast<uint64_t>(stop);
    options.stall_seconds = 60;
    auto run = PipelineRun::Create(cfg, options);
    REQUIRE(run.ok());
    REQUIRE(StepAll(**run, stop) == stop);
    Status saved = (*run)->SaveCheckpoint(dir);
    INFO(saved.ToString());
    REQUIRE(saved.ok());
  }
  PipelineRun::Options options;
  options.resume_dir = dir;
  options.stall_seconds = 60;
  auto run = PipelineRun::Create(cfg, options);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  CHECK((*run)->first_batch() == stop);
  StepAll(**run);
  REQUIRE((*run)->Finish().ok());
  auto digest = (*run)->ParameterDigest();
  REQUIRE(digest.ok());
  return *digest;
}

}  // namespace actorrec::trainer
