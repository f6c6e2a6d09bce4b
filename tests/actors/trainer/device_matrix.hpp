// The equivalence matrix of a device backend (issue 22, item 4): every mode
// (lrpp_delayed, lrpp, replicated, no_cache, static_hot, ideal) × L ∈ {1,
// 3, 20} × W ∈ {1, 2} ends with parameters bitwise equal to no_cache's on
// the same backend and W, and a run stopped, checkpointed and resumed equals
// the run that never stopped. The same code runs on a GPU
// (tests/gpu/gpu_device_test.cpp, training.backend = "cuda") and on the host
// against the fake device backend (device_cache_test.cpp), so CI exercises
// it. Tiny model, few batches: seconds of device time.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "tests/actors/trainer/lockstep_digest.hpp"
#include "tests/actors/trainer/resume_runs.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::trainer {

// The matrix's Case: `backend` (training.backend), row-wise state (Adagrad)
// so that a row's optimizer state travels with it, 8 batches.
inline Case DeviceMatrixCase(const std::string& backend) {
  Case c;
  c.backend = backend;
  c.sparse = "adagrad";
  c.batches = 8;
  return c;
}

// Runs the matrix on c's backend; `label` names it in failures.
inline void CheckDeviceModeMatrix(Case c, const std::string& label) {
  for (int w : {1, 2}) {
    c.trainers = w;
    c.mode = "no_cache";
    c.lookahead = 3;
    c.cache_rows = 8192;
    const uint64_t reference = LockstepDigest(c);
    for (int l : {1, 3, 20}) {
      for (const char* mode : {"lrpp_delayed", "lrpp", "replicated", "no_cache", "static_hot", "ideal"}) {
        c.mode = mode;
        c.lookahead = l;
        // static_hot and ideal with a small cache: most rows fetched.
        c.cache_rows = c.mode == "static_hot" || c.mode == "ideal" ? 512 : 8192;
        INFO(label << ": W=" << w << " " << mode << " L=" << l);
        CHECK(LockstepDigest(c) == reference);
      }
    }
  }
}

// With dedup groups (RecD): sessions of 8, tables 0 and 1 grouped with the
// dense features (`dense = true`), table 2 alone; every mode at L = 3, W =
// 1 and 2, sum and mean pooling, equals no_cache on c's backend bitwise:
// the tuples pooled, expanded (GatherRows) and summed back
// (SumRowsByIndex) where the slots are.
inline void CheckDeviceDedupMatrix(Case c, const std::string& label) {
  c.session_length = 8;
  c.session_dup = "[0.95, 0.95, 0.6, 0.0]";
  c.session_dense_dup = 0.9;
  c.dedup_groups = {"[0, 1]\ndense = true", "[2]"};
  c.lookahead = 3;
  for (const char* pooling : {"sum", "mean"}) {
    c.pooling = pooling;
    for (int w : {1, 2}) {
      c.trainers = w;
      c.mode = "no_cache";
      c.cache_rows = 8192;
      const uint64_t reference = LockstepDigest(c);
      for (const char* mode : {"lrpp_delayed", "lrpp", "replicated", "static_hot", "ideal"}) {
        c.mode = mode;
        c.cache_rows = c.mode == "static_hot" || c.mode == "ideal" ? 512 : 8192;
        INFO(label << ": dedup groups, " << pooling << " W=" << w << " " << mode);
        CHECK(LockstepDigest(c) == reference);
      }
    }
  }
}

// A run of c (lrpp_delayed, W = 2) stopped after 3 batches, checkpointed and
// resumed equals the run that never stopped, on both drivers.
inline void CheckDeviceResume(Case c, const std::string& label) {
  c.mode = "lrpp_delayed";
  c.trainers = 2;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "device_resume.toml");
  const uint64_t straight = Straight(cfg);
  INFO(label);
  testing::TempDir dir;
  CHECK(LockstepResumed(cfg, 3, dir.path()) == straight);
  testing::TempDir pdir;
  CHECK(PipelineResumed(cfg, 3, pdir.path()) == straight);
}

}  // namespace actorrec::trainer
