// SlotArray (actors/trainer/slot_array.hpp) on a fake device backend
// against the same operations on the CPU backend's host array: rows in and
// out through the staging ring (also past its size, and with the fake's
// late copies), pooling from the device rows, and every row optimizer
// over a slot list, all bitwise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "actors/trainer/slot_array.hpp"
#include "gpu/cpu_backend.hpp"
#include "tests/actors/trainer/fake_device_backend.hpp"

namespace actorrec::trainer {
namespace {

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> ReadAll(SlotArray& s) {
  std::vector<uint32_t> every(s.slots());
  for (uint32_t i = 0; i < s.slots(); ++i) every[i] = i;
  std::vector<float> out(size_t{s.slots()} * s.row_floats());
  s.VisitRows(every.data(), every.size(), [&](size_t i, const float* src) {
    std::memcpy(out.data() + i * s.row_floats(), src, s.row_floats() * sizeof(float));
  });
  return out;
}

std::vector<float> RandomRows(size_t n, uint32_t floats, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rows(n * floats);
  for (float& x : rows) x = u(rng);
  return rows;
}

}  // namespace

TEST_CASE("slot rows written and read through the staging ring equal the host array", "[trainer][slots]") {
  const models::RowOptimizer opt(config::SparseOptimizer::kAdagrad, {}, 4);
  auto cpu = gpu::MakeCpuBackend();
  FakeDeviceBackend fake;
  {
    SlotArray host(cpu.get(), &opt), dev(&fake, &opt);
    CHECK_FALSE(host.device());
    CHECK(dev.device());
    std::mt19937 rng(3);
    for (uint32_t grow : {40u, 100u}) {  // the second grows a filled array
      host.Ensure(grow);
      dev.Ensure(grow);
      CHECK(dev.staging_rows() == grow);
      // Many small writes: the ring laps several times, each reuse after
      // the late copy of the span it overwrites.
      for (int round = 0; round < 30; ++round) {
        std::vector<uint32_t> slots;
        for (uint32_t s = round % 3; s < grow; s += 3 + round % 5) slots.push_back(s);
        const std::vector<float> rows = RandomRows(slots.size(), opt.row_floats(), rng);
        host.WriteRows(slots.data(), slots.size(), rows.data());
        dev.WriteRows(slots.data(), slots.size(), rows.data());
      }
      CHECK(SameBits(ReadAll(host), ReadAll(dev)));
    }
    float one[5];
    dev.ReadRow(7, one);
    CHECK(std::memcmp(one, host.host_slot(7), sizeof(one)) == 0);
  }
  CHECK(fake.errors().empty());
  CHECK(fake.live() == 0);  // the array and the ring freed with it
}

TEST_CASE("more rows than the staging ring holds go through it in pieces", "[trainer][slots]") {
  const models::RowOptimizer opt(config::SparseOptimizer::kSgd, {}, 1);
  FakeDeviceBackend fake;
  auto cpu = gpu::MakeCpuBackend();
  SlotArray host(cpu.get(), &opt), dev(&fake, &opt);
  const uint32_t n = static_cast<uint32_t>(kMaxStagingRows) + 1000;
  host.Ensure(n);
  dev.Ensure(n);
  CHECK(dev.staging_rows() == kFirstStagingRows);  // grown by the first large write
  std::vector<uint32_t> slots(n);
  for (uint32_t i = 0; i < n; ++i) slots[i] = n - 1 - i;
  std::mt19937 rng(5);
  const std::vector<float> rows = RandomRows(n, opt.row_floats(), rng);
  host.WriteRows(slots.data(), n, rows.data());
  const int before = fake.stats().scatters.load();
  dev.WriteRows(slots.data(), n, rows.data());
  CHECK(dev.staging_rows() == kMaxStagingRows);  // the bound: the rest went in a second piece
  CHECK(fake.stats().scatters.load() - before == 2);
  CHECK(SameBits(ReadAll(host), ReadAll(dev)));
  CHECK(fake.errors().empty());
}

TEST_CASE("the staging ring grows to twice the largest landing, bounded by the slots and kMaxStagingRows",
          "[trainer][slots]") {
  CHECK(StagingRowsFor(0, 10, 100) == 20);
  CHECK(StagingRowsFor(30, 10, 100) == 30);  // grow-only
  CHECK(StagingRowsFor(30, 80, 100) == 100);  // bounded
  const models::RowOptimizer opt(config::SparseOptimizer::kSgd, {}, 2);
  FakeDeviceBackend fake;
  auto cpu = gpu::MakeCpuBackend();
  {
    SlotArray host(cpu.get(), &opt), dev(&fake, &opt);
    const uint32_t slots = 5000;
    host.Ensure(slots);
    dev.Ensure(slots);
    CHECK(dev.staging_rows() == kFirstStagingRows);
    std::mt19937 rng(11);
    // Landings of 600, then 1500, then 4000 rows into a ring of 1024: each
    // grows it (1200, 3000, then the bound 5000) and the rows still land
    // in their slots, the late copies of the old ring waited for first.
    size_t at = 0;
    for (size_t n : {600u, 1500u, 4000u, 100u}) {
      std::vector<uint32_t> list(n);
      for (size_t i = 0; i < n; ++i) list[i] = static_cast<uint32_t>((at + i * 7) % slots);
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      const std::vector<float> rows = RandomRows(list.size(), opt.row_floats(), rng);
      host.WriteRows(list.data(), list.size(), rows.data());
      dev.WriteRows(list.data(), list.size(), rows.data());
      at += n;
    }
    CHECK(dev.staging_rows() == slots);
    CHECK(SameBits(ReadAll(host), ReadAll(dev)));
  }
  CHECK(fake.errors().empty());
  CHECK(fake.live() == 0);
}

TEST_CASE("pooling and every row optimizer on device slots give the host array's bits", "[trainer][slots]") {
  for (auto kind : {config::SparseOptimizer::kSgd, config::SparseOptimizer::kAdagrad,
                    config::SparseOptimizer::kRowwiseAdagrad, config::SparseOptimizer::kAdam}) {
    INFO("optimizer " << static_cast<int>(kind));
    models::OptimizerSettings settings;
    settings.lr = 0.05f;
    const models::RowOptimizer opt(kind, settings, 6);
    auto cpu = gpu::MakeCpuBackend();
    FakeDeviceBackend fake;
    SlotArray host(cpu.get(), &opt), dev(&fake, &opt);
    const uint32_t S = 50;
    host.Ensure(S);
    dev.Ensure(S);
    std::mt19937 rng(11 + static_cast<int>(kind));
    std::vector<uint32_t> every(S);
    for (uint32_t s = 0; s < S; ++s) every[s] = s;
    std::vector<float> init = RandomRows(S, opt.row_floats(), rng);
    for (uint32_t s = 0; s < S; ++s) opt.InitState(init.data() + size_t{s} * opt.row_floats() + opt.width());
    host.WriteRows(every.data(), S, init.data());
    dev.WriteRows(every.data(), S, init.data());
    // Without it the fake's late copies would land after the updates below.
    dev.BeforeComputeAll();
    for (int step = 0; step < 6; ++step) {
      // Scattered, distinct slots, more than the host loop prefetches ahead.
      std::vector<uint32_t> slots;
      for (uint32_t i = 0; i < 20; ++i) slots.push_back((i * 37 + step * 11) % S);
      const std::vector<float> grads = RandomRows(slots.size(), opt.width(), rng);
      host.ApplyRows(slots.data(), slots.size(), grads.data());
      dev.ApplyRows(slots.data(), slots.size(), grads.data());
    }
    CHECK(SameBits(ReadAll(host), ReadAll(dev)));
    // Two bags over slots 3, 9, 9 and 40: pooled from the device rows.
    const std::vector<uint32_t> unique = {3, 9, 40}, inverse = {0, 1, 1, 2}, offsets = {0, 3, 4};
    gpu::SlotBags bags{unique.data(), unique.size(), inverse.data(), offsets.data(), 2};
    std::vector<float> ph(2 * opt.width()), pd(2 * opt.width());
    host.Pool(opt.width(), bags, gpu::Pooling::kMean, ph.data(), opt.width());
    dev.Pool(opt.width(), bags, gpu::Pooling::kMean, pd.data(), opt.width());
    CHECK(SameBits(ph, pd));
    CHECK(fake.errors().empty());
  }
}

}  // namespace actorrec::trainer
