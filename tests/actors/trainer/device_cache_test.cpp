// The trainer's cache slots in a device backend's memory, end to end: every
// mode (lrpp_delayed, lrpp, replicated, no_cache, static_hot, ideal) with
// W = 1 and 2, on both drivers, trained on a fake device backend (its own
// memory, host memory underneath, late copies: fake_device_backend.hpp),
// ends bitwise equal to the CPU backend's run. Every row then enters the
// slots through the staging ring and a scatter, leaves through a gather,
// is pooled from the device rows and updated by the backend's row op.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "actors/run/pipeline_run.hpp"
#include "gpu/backend_select.hpp"
#include "tests/actors/trainer/fake_device_backend.hpp"
#include "tests/actors/trainer/lockstep_digest.hpp"

namespace actorrec::trainer {
namespace {

// While alive, every trainer's backend is a fake device; what each saw
// stays here after the run has freed it.
struct FakeDevices {
  FakeDevices() {
    gpu::SetBackendFactoryForTests([this]() -> std::unique_ptr<gpu::Backend> {
      made.push_back(std::make_shared<FakeDeviceStats>());
      return std::make_unique<FakeDeviceBackend>(made.back());
    });
  }
  ~FakeDevices() { gpu::SetBackendFactoryForTests({}); }
  std::vector<std::shared_ptr<FakeDeviceStats>> made;
};

uint64_t PipelineDigest(const Case& c) {
  const config::Config cfg = config::ParseConfig(ConfigText(c), "device_cache.toml");
  PipelineRun::Options options;
  options.stall_seconds = 60;
  auto run = PipelineRun::Create(cfg, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  StepToEnd(**run);
  REQUIRE((*run)->Finish().ok());
  auto digest = (*run)->ParameterDigest();
  REQUIRE(digest.ok());
  return *digest;
}

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
        }
      }
      CHECK(pipeline == cpu);
    }
  }
}

}  // namespace actorrec::trainer

namespace actorrec::trainer {

// Dedup groups still pool through the host on a device (no device
// GatherRows/SumRowsByIndex yet): mixed with per-sample tables, the run
// still equals the CPU's bitwise, and only the grouped batches stage.
TEST_CASE("dedup groups with the cache slots in a device's memory equal the CPU backend bitwise",
          "[trainer][device_cache]") {
  Case c;
  c.sparse = "adagrad";
  c.batches = 4;
  c.trainers = 2;
  c.dedup_groups = {"[0, 1]"};
  for (const char* mode : {"no_cache", "lrpp_delayed"}) {
    c.mode = mode;
    c.cache_rows = 8192;
    INFO(mode);
    const uint64_t cpu = LockstepDigest(c);
    FakeDevices fakes;
    CHECK(LockstepDigest(c) == cpu);
    for (const auto& f : fakes.made) {
      CHECK(f->errors.empty());
      CHECK(f->host_pools.load() > 0);
    }
  }
}

}  // namespace actorrec::trainer
