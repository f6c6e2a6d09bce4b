// The trainer's cache slots in a device backend's memory, end to end: every
// mode (lrpp_delayed, lrpp, replicated, no_cache, static_hot, ideal) with
// W = 1 and 2, on both drivers, trained on a fake device backend (its own
// memory, host memory underneath, late copies: fake_device_backend.hpp),
// ends bitwise equal to the CPU backend's run. Every row then enters the
// slots through the staging ring and a scatter, leaves through a gather,
// is pooled from the device rows and updated by the backend's row op.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "actors/run/pipeline_run.hpp"
#include "actors/run/run_parts.hpp"
#include "gpu/backend_select.hpp"
#include "tests/actors/trainer/device_matrix.hpp"
#include "tests/actors/trainer/fake_device_backend.hpp"
#include "tests/actors/trainer/lockstep_digest.hpp"

namespace actorrec::trainer {
namespace {


}  // namespace

TEST_CASE("every mode with the cache slots in a device's memory equals the CPU backend bitwise",
          "[trainer][device_cache]") {
  Case c;
  c.sparse = "adagrad";
  c.batches = 6;
  for (int w : {1, 2}) {
    c.trainers = w;
    for (const char* mode : {"no_cache", "lrpp_delayed", "lrpp", "replicated", "static_hot", "ideal"}) {
      c.mode = mode;
      c.cache_rows = std::string(mode) == "static_hot" || std::string(mode) == "ideal" ? 512 : 8192;
      INFO("W=" << w << " " << mode);
      const uint64_t cpu = LockstepDigest(c);
      uint64_t lockstep = 0, pipeline = 0;
      {
        FakeDevices fakes;
        lockstep = LockstepDigest(c);
        REQUIRE(fakes.made.size() == size_t(w));
        for (const auto& f : fakes.made) {
          CHECK(f->errors.empty());
          CHECK(f->scatters.load() > 0);  // rows went through the ring and the backend's ops
          if (c.mode != "no_cache") CHECK(f->row_updates.load() > 0);  // no_cache: the shards update
          // The pooled values and their gradients never left the device.
          CHECK(f->resident_pools.load() > 0);
          CHECK(f->resident_bag_grads.load() > 0);
          CHECK(f->host_pools.load() == 0);
          CHECK(f->host_bag_grads.load() == 0);
          // Each batch's inputs went up in one copy that its compute waited
          // for; the lockstep driver stages them right before the compute.
          CHECK(f->input_uploads.load() == c.batches);
          CHECK(f->input_waits.load() == c.batches);
          CHECK(f->inputs_ahead.load() == 0);
        }
      }
      CHECK(lockstep == cpu);
      {
        FakeDevices fakes;
        pipeline = PipelineDigest(c);
        REQUIRE(fakes.made.size() == size_t(w));
        for (const auto& f : fakes.made) {
          CHECK(f->errors.empty());
          CHECK(f->scatters.load() > 0);
          // The sums ran in the fakes' memory (docs/gpu.md "Sums in the
          // backend's memory"): the row gradients computed there and never
          // brought down, the summed rows applied from there, and with two
          // trainers every sum through the shared-device collective (whose
          // copies and sums the fake checks are of fakes' memory).
          CHECK(f->resident_row_grads.load() > 0);
          CHECK(f->resident_bag_grads.load() == 0);
          if (c.mode != "no_cache") CHECK(f->resident_row_updates.load() > 0);
          CHECK(f->row_updates.load() == 0);
          if (w > 1) CHECK(f->rank_sums.load() > 0);
          CHECK(f->input_uploads.load() == c.batches);
          CHECK(f->input_waits.load() == c.batches);
        }
      }
      CHECK(pipeline == cpu);
    }
  }
}

// The device equivalence matrix and resume (device_matrix.hpp) as the GPU
// test program runs them with training.backend = "cuda", here on fake
// devices: the same code exercised on every machine.
TEST_CASE("the device equivalence matrix and resume pass on the fake device backend", "[trainer][device_cache]") {
  FakeDevices fakes;
  CheckDeviceModeMatrix(DeviceMatrixCase("cpu"), "fake device");
  CheckDeviceResume(DeviceMatrixCase("cpu"), "fake device");
  CheckDeviceDedupMatrix(DeviceMatrixCase("cpu"), "fake device");
  REQUIRE_FALSE(fakes.made.empty());
  for (const auto& f : fakes.made) {
    std::lock_guard<std::mutex> lock(f->mu);
    CHECK(f->errors.empty());
  }
}

// The compute stream's waits (gpu::StreamWaits) per batch: the device's
// clock on a device backend (the fake's: every wait for rows and for sync
// lasts a known time, once per trainer and batch), the host's phases on the
// CPU backend, on both drivers.
TEST_CASE("the compute stream's waits come from the device's clock on a device and the host's on the CPU",
          "[trainer][device_cache]") {
  Case c;
  c.mode = "lrpp_delayed";
  c.batches = 4;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "waits.toml");
  for (bool device : {true, false}) {
    std::unique_ptr<FakeDevices> fakes;
    if (device) fakes = std::make_unique<FakeDevices>();
    INFO((device ? "fake device" : "cpu"));
    auto check = [&](const StepReport& r, const char* driver) {
      INFO(driver << " batch " << r.batch);
      CHECK(r.waits_on_device == device);
      if (device) {
        CHECK(r.stream_wait_rows_s == kFakeRowsWait);
        CHECK(r.stream_wait_sync_s == kFakeSyncWait);
        for (const TrainerFigures& t : r.trainers) {
          CHECK(t.stream_wait_rows_s == kFakeRowsWait);
          CHECK(t.stream_wait_sync_s == kFakeSyncWait);
        }
      } else {
        CHECK(r.stream_wait_rows_s == r.fetch_s);
        CHECK(r.stream_wait_sync_s == r.dense_sync_s);
      }
      if (std::string(driver) == "pipeline") CHECK(r.trainers.size() == size_t(c.trainers));
    };
    // Every batch of a run checked, then the run finished.
    auto step_all = [&](auto& run, const char* driver) {
      StepReport r;
      int batches = 0;
      while (true) {
        auto more = run.Step(&r);
        REQUIRE(more.ok());
        if (!*more) break;
        check(r, driver);
        ++batches;
      }
      CHECK(batches == c.batches);
      REQUIRE(run.Finish().ok());
    };
    {
      auto run = LockstepRun::Create(cfg);
      REQUIRE(run.ok());
      step_all(**run, "lockstep");
    }
    {
      PipelineRun::Options options;
      options.stall_seconds = 60;
      auto run = PipelineRun::Create(cfg, options);
      REQUIRE(run.ok());
      step_all(**run, "pipeline");
    }
    if (device) {
      for (const auto& f : fakes->made) {
        std::lock_guard<std::mutex> lock(f->mu);
        CHECK(f->errors.empty());
        CHECK(f->rows_waits.load() >= c.batches);  // one per batch (and the evaluation's)
        CHECK(f->sync_waits.load() == c.batches);
      }
    }
  }
}

}  // namespace actorrec::trainer

namespace actorrec::trainer {

// Dedup groups (RecD's IKJT) with the cache slots in a device's memory: a
// group's tuples are pooled into the device's memory, expanded to the
// samples there (GatherRows) and their gradients summed back per tuple
// there (SumRowsByIndex) before the reduction to rows; with `dense = true`
// DLRM's bottom MLP runs per distinct (tuple, dense row) on the device too.
// Every mode, W = 1 and 2, sum and mean pooling, on both drivers, equals
// the CPU backend bitwise, and nothing pools into host memory or reduces
// from it (the fake's pointer checks: every GatherRows and SumRowsByIndex
// on its memory, the index on the host).
TEST_CASE("dedup groups with the cache slots in a device's memory stay on the device and equal the CPU bitwise",
          "[trainer][device_cache][dedup]") {
  Case c;
  c.sparse = "adagrad";
  c.batches = 4;
  c.session_length = 8;
  c.session_dup = "[0.95, 0.95, 0.6, 0.0]";
  c.session_dense_dup = 0.9;
  for (bool dense : {false, true}) {
    // Tables 0 and 1 grouped (with the dense features when `dense`), table
    // 2 alone, table 3 per sample: grouped and plain tables in one batch.
    c.dedup_groups = {dense ? "[0, 1]\ndense = true" : "[0, 1]", "[2]"};
    for (const char* pooling : {"sum", "mean"}) {
      c.pooling = pooling;
      for (int w : {1, 2}) {
        c.trainers = w;
        for (const char* mode : {"no_cache", "lrpp_delayed", "lrpp", "replicated", "static_hot", "ideal"}) {
          c.mode = mode;
          c.cache_rows = std::string(mode) == "static_hot" || std::string(mode) == "ideal" ? 512 : 8192;
          INFO((dense ? "dense = true " : "") << pooling << " W=" << w << " " << mode);
          const uint64_t cpu = LockstepDigest(c);
          auto check_stayed = [&](const std::vector<std::shared_ptr<FakeDeviceStats>>& made) {
            REQUIRE(made.size() == size_t(w));
            for (const auto& f : made) {
              std::lock_guard<std::mutex> lock(f->mu);
              CHECK(f->errors.empty());
              CHECK(f->host_pools.load() == 0);
              CHECK(f->host_bag_grads.load() == 0);
              CHECK(f->resident_pools.load() > 0);
              // Two grouped tables' tuples expanded per batch, their
              // gradients summed per tuple; with `dense`, the bottom MLP's
              // output and gradient too.
              CHECK(f->gather_rows.load() >= 2 * c.batches);
              CHECK(f->sums_by_index.load() >= 2 * c.batches);
            }
          };
          {
            FakeDevices fakes;
            CHECK(LockstepDigest(c) == cpu);
            check_stayed(fakes.made);
          }
          if (w == 2 && (std::string(mode) == "lrpp_delayed" || std::string(mode) == "no_cache")) {
            FakeDevices fakes;
            CHECK(PipelineDigest(c) == cpu);
            check_stayed(fakes.made);
          }
        }
      }
    }
  }
}

}  // namespace actorrec::trainer

namespace actorrec::trainer {

// A batch's inputs go up ahead (TrainerCore::StageInputs): batch 1's dense
// rows and labels are uploaded while batch 0 computes, into the other input
// set, and its compute waits for that copy alone. On the fake device (whose
// input copies land only at ComputeAfterInputs) both batches give the CPU
// backend's logits, loss and row gradients bitwise, with and without a
// dense dedup group.
TEST_CASE("a batch's inputs uploaded while the previous batch computes give the CPU's bits",
          "[trainer][device_cache]") {
  for (bool dense_group : {false, true}) {
    INFO((dense_group ? "dense group" : "no groups"));
    Case c;
    c.trainers = 1;
    auto parts_of = [&]() {
      auto parts = RunParts::Create(config::ParseConfig(ConfigText(c), "inputs_ahead.toml"));
      REQUIRE(parts.ok());
      return std::move(parts).value();
    };
    auto cpu = parts_of();
    std::unique_ptr<RunParts> dev;
    FakeDevices fakes;
    dev = parts_of();
    REQUIRE(fakes.made.size() == 1);
    const uint32_t tables = cpu->T();
    // Two batches of 6 samples; table t's bags use slots 8t … 8t + 2. With
    // the dense group (table 0), samples come in pairs of one tuple and one
    // dense row.
    struct Slice {
      data::SampleBlock samples;
      std::vector<oracle::TableFeatures> features;
      std::vector<oracle::BagGroup> groups;
    };
    std::vector<Slice> slices(2);
    for (int b = 0; b < 2; ++b) {
      Slice& s = slices[b];
      s.samples.Reset(3, tables);
      s.features.resize(tables);
      for (uint32_t i = 0; i < 6; ++i) {
        s.samples.labels.push_back(static_cast<float>((i + b) % 2));
        for (int j = 0; j < 3; ++j) s.samples.dense.push_back(0.125f * static_cast<float>(i / 2 + j + 3 * b));
      }
      for (uint32_t t = 0; t < tables; ++t) {
        s.features[t].table = t;
        s.features[t].unique_slots = {8 * t, 8 * t + 1, 8 * t + 2};
        s.features[t].inverse = {0, 1, 2, 0, 1, 2};
        s.features[t].offsets = {0, 1, 2, 3, 4, 5, 6};
      }
      if (dense_group) {
        // Table 0 grouped: three tuples, sample i uses tuple i / 2.
        s.features[0].inverse = {uint32_t(b), 1, 2};
        s.features[0].offsets = {0, 1, 2, 3};
        s.groups.push_back({{0}, {0, 0, 1, 1, 2, 2}});
      }
    }
    std::vector<float> rows(size_t{8} * tables * cpu->trainers[0]->row_floats());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
    std::vector<uint32_t> slots(8 * tables);
    for (uint32_t s = 0; s < slots.size(); ++s) slots[s] = s;
    for (RunParts* p : {cpu.get(), dev.get()}) {
      TrainerCore& core = *p->trainers[0];
      core.EnsureSlots(8 * tables);
      if (dense_group) core.SetDenseGroup({0});
      core.cache().WriteRows(slots.data(), slots.size(), rows.data());
      core.cache().BeforeComputeAll();
    }
    // Batch 1's inputs go up after batch 0's compute began and before its
    // backward's downloads: batch 0's compute has not ended.
    auto run = [&](TrainerCore& core, std::vector<float>* out) {
      for (int b = 0; b < 2; ++b) {
        const Slice& s = slices[b];
        core.BeforeCompute(b, s.samples, s.groups);
        if (b == 0) core.StageInputs(1, slices[1].samples, slices[1].groups);
        core.Forward(s.samples, s.features, s.groups);
        out->insert(out->end(), core.model().logits(), core.model().logits() + 6);
        out->push_back(static_cast<float>(core.Backward(s.samples, s.features, 1.0f / 6, s.groups)));
        for (uint32_t slot = 0; slot < 8 * tables; ++slot) {
          if (const float* g = core.RowGrad(slot)) out->insert(out->end(), g, g + core.width());
        }
        const auto grads = core.dense_grads();
        out->insert(out->end(), grads.begin(), grads.end());
      }
    };
    std::vector<float> on_cpu, on_dev;
    run(*cpu->trainers[0], &on_cpu);
    run(*dev->trainers[0], &on_dev);
    REQUIRE(on_cpu.size() == on_dev.size());
    CHECK(std::memcmp(on_cpu.data(), on_dev.data(), on_cpu.size() * sizeof(float)) == 0);
    const FakeDeviceStats& f = *fakes.made[0];
    CHECK(f.input_uploads.load() == 2);
    CHECK(f.input_waits.load() == 2);
    CHECK(f.inputs_ahead.load() == 1);  // batch 1's: downloads of batch 0 came between
    std::lock_guard<std::mutex> lock(fakes.made[0]->mu);
    CHECK(fakes.made[0]->errors.empty());
  }
}

}  // namespace actorrec::trainer
