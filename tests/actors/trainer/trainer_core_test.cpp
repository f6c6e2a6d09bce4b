// TrainerCore's batched row operations against their one-row forms, and
// its sums in a device backend's memory against the host's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "actors/run/run_parts.hpp"
#include "configs/config.hpp"
#include "data/gen/random.hpp"
#include "tests/actors/trainer/fake_device_backend.hpp"
#include "tests/actors/trainer/test_config.hpp"

namespace actorrec::trainer {
namespace {

std::unique_ptr<RunParts> Parts(const Case& c) {
  auto parts = RunParts::Create(config::ParseConfig(ConfigText(c), "trainer_core.toml"));
  REQUIRE(parts.ok());
  return std::move(parts).value();
}

bool SameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// Four samples; table t's bags use slots 10t and 10t + 1 (sample i: slot
// 10t + i % 2).
void FourSamples(uint32_t tables, data::SampleBlock* samples, std::vector<oracle::TableFeatures>* features) {
  samples->Reset(3, tables);
  features->assign(tables, {});
  for (uint32_t i = 0; i < 4; ++i) {
    samples->labels.push_back(static_cast<float>(i % 2));
    for (int j = 0; j < 3; ++j) samples->dense.push_back(0.25f * static_cast<float>(i + j));
  }
  for (uint32_t t = 0; t < tables; ++t) {
    (*features)[t].table = t;
    (*features)[t].unique_slots = {10 * t, 10 * t + 1};
    (*features)[t].inverse = {0, 1, 0, 1};
    (*features)[t].offsets = {0, 1, 2, 3, 4};
  }
}

// Touched and untouched rows (even i: a touched slot; odd: 41..63, which
// no sample uses), more than the packs prefetch ahead.
std::vector<oracle::RowSlot> MixedRows(uint32_t tables) {
  std::vector<oracle::RowSlot> rows;
  for (uint32_t i = 0; i < 24; ++i) rows.push_back({0, i, i % 2 == 0 ? 10 * (i / 2 % tables) : 40 + i});
  return rows;
}

}  // namespace

TEST_CASE("ApplyRows updates each row as ApplyRow does", "[trainer]") {
  for (const char* sparse : {"sgd", "adagrad", "rowwise_adagrad", "adam"}) {
    INFO(sparse);
    Case c;
    c.sparse = sparse;
    auto batched = Parts(c), one_by_one = Parts(c);
    TrainerCore& a = *batched->trainers[0];
    TrainerCore& b = *one_by_one->trainers[0];
    a.EnsureSlots(64);  // no_cache: the cache grows with each batch, and none has come
    b.EnsureSlots(64);
    // More rows than ApplyRows prefetches ahead, in scattered slots.
    data::gen::Rng rng(5);
    std::vector<oracle::RowSlot> rows;
    for (uint32_t i = 0; i < 40; ++i) rows.push_back({0, i, (i * 37) % a.slots()});
    std::vector<float> sums(rows.size() * a.width());
    for (float& x : sums) x = static_cast<float>(rng.Normal());
    for (uint32_t s = 0; s < a.slots(); ++s) {
      for (uint32_t j = 0; j < a.row_floats(); ++j) a.cache().host_slot(s)[j] = b.cache().host_slot(s)[j] = 0.01f * static_cast<float>(j + s % 7);
    }
    a.ApplyRows(rows, sums.data());
    for (size_t i = 0; i < rows.size(); ++i) b.ApplyRow(rows[i].slot, sums.data() + i * b.width());
    CHECK(SameBits(a.cache().host_slot(0), b.cache().host_slot(0), size_t{a.slots()} * a.row_floats()));
  }
}

TEST_CASE("PackRowGrads appends each touched row's gradient and -0 for the others", "[trainer]") {
  auto parts = Parts(Case{});
  TrainerCore& core = *parts->trainers[0];
  core.EnsureSlots(64);
  const uint32_t tables = parts->T();
  data::SampleBlock samples;
  std::vector<oracle::TableFeatures> features;
  FourSamples(tables, &samples, &features);
  core.Forward(samples, features);
  core.Backward(samples, features, 0.25f);

  const std::vector<oracle::RowSlot> rows = MixedRows(tables);
  std::vector<float> packed{7.0f};  // what was there stays in front
  core.PackRowGrads(rows, &packed);
  REQUIRE(packed.size() == 1 + rows.size() * core.width());
  CHECK(packed[0] == 7.0f);
  const std::vector<float> minus_zero(core.width(), -0.0f);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float* got = packed.data() + 1 + i * core.width();
    const float* want = core.RowGrad(rows[i].slot);
    INFO("row " << i << " slot " << rows[i].slot);
    CHECK((want != nullptr) == (i % 2 == 0));
    CHECK(SameBits(got, want ? want : minus_zero.data(), core.width()));
  }
}

// Sums in the backend's memory (TrainerCore::KeepSumsResident): on a fake
// device the packed dense + row gradients are PackRowGrads' bits (−0 for an
// untouched row), and the private rows, the row sums and the dense sum
// apply from the device as ApplyRow, ApplyRows and ApplyDense do on the
// host; on the CPU backend the switch changes nothing.
TEST_CASE("on a device PackResident packs PackRowGrads' bits and the sums apply as on the host",
          "[trainer][device_cache]") {
  Case c;
  c.sparse = "adagrad";
  c.trainers = 1;
  auto host_parts = Parts(c);
  FakeDevices fakes;
  auto device_parts = Parts(c);
  REQUIRE(fakes.made.size() == 1);
  TrainerCore& h = *host_parts->trainers[0];
  TrainerCore& d = *device_parts->trainers[0];
  h.KeepSumsResident(true);
  d.KeepSumsResident(true);
  CHECK_FALSE(h.sums_resident());
  REQUIRE(d.sums_resident());
  std::vector<uint32_t> all(64);
  std::vector<float> init(all.size() * h.row_floats());
  for (uint32_t s = 0; s < all.size(); ++s) all[s] = s;
  for (size_t i = 0; i < init.size(); ++i) init[i] = 0.01f * static_cast<float>(i % 97);
  for (TrainerCore* core : {&h, &d}) {
    core->EnsureSlots(64);
    core->cache().WriteRows(all.data(), all.size(), init.data());
    core->cache().BeforeComputeAll();
  }
  const uint32_t tables = host_parts->T();
  data::SampleBlock samples;
  std::vector<oracle::TableFeatures> features;
  FourSamples(tables, &samples, &features);
  // A batch before that touched the rows this one leaves untouched: their
  // old gradients must not be packed.
  std::vector<oracle::TableFeatures> before = features;
  for (uint32_t t = 0; t < tables; ++t) before[t].unique_slots = {41 + (2 * t) % 22, 42 + (2 * t) % 22};
  for (TrainerCore* core : {&h, &d}) {
    core->Forward(samples, before);
    core->Backward(samples, before, 0.25f);
    core->Forward(samples, features);
    core->Backward(samples, features, 0.25f);
  }
  const std::vector<oracle::RowSlot> rows = MixedRows(tables);
  std::vector<float> want(h.dense_grads().begin(), h.dense_grads().end());
  const size_t P = want.size();
  h.PackRowGrads(rows, &want);
  gpu::Buffer packed;
  REQUIRE(d.PackResident(true, rows, &packed) == want.size());
  std::vector<float> got(want.size());
  d.backend().Download(got.data(), packed.data(), got.size());
  CHECK(SameBits(got.data(), want.data(), want.size()));

  // The touched rows as private rows, then every row with the packed
  // gradients as its sums, then the dense step.
  std::vector<oracle::RowSlot> touched;
  for (const oracle::RowSlot& r : rows) {
    if (h.RowGrad(r.slot) != nullptr && d.Touched(r.slot)) touched.push_back(r);
  }
  REQUIRE(touched.size() == rows.size() / 2);
  // MixedRows repeats slots; the row update takes distinct ones.
  std::sort(touched.begin(), touched.end(), [](auto& a, auto& b) { return a.slot < b.slot; });
  touched.erase(std::unique(touched.begin(), touched.end(), [](auto& a, auto& b) { return a.slot == b.slot; }),
                touched.end());
  h.ApplyPrivateRows(touched);
  d.ApplyPrivateRows(touched);
  std::vector<oracle::RowSlot> distinct(rows.begin(), rows.end());
  std::sort(distinct.begin(), distinct.end(), [](auto& a, auto& b) { return a.slot < b.slot; });
  distinct.erase(std::unique(distinct.begin(), distinct.end(), [](auto& a, auto& b) { return a.slot == b.slot; }),
                 distinct.end());
  std::vector<float> sums(want.begin() + static_cast<std::ptrdiff_t>(P),
                          want.begin() + static_cast<std::ptrdiff_t>(P + distinct.size() * h.width()));
  float* dev_sums = d.backend().Allocate(sums.size());
  d.backend().Upload(dev_sums, sums.data(), sums.size());
  h.ApplyRows(distinct, sums.data());
  d.ApplyRowsResident(distinct, dev_sums);
  h.SyncStarts();
  d.SyncStarts();
  h.ApplyDense(std::span<const float>(want.data(), P));
  d.ApplyDenseResident(packed.data());
  std::vector<float> hr(h.row_floats()), dr(d.row_floats());
  for (uint32_t s = 0; s < all.size(); ++s) {
    h.cache().ReadRow(s, hr.data());
    d.cache().ReadRow(s, dr.data());
    INFO("slot " << s);
    CHECK(SameBits(hr.data(), dr.data(), hr.size()));
  }
  CHECK(DenseDigest(h) == DenseDigest(d));
  d.backend().Free(dev_sums);
  const FakeDeviceStats& f = *fakes.made[0];
  CHECK(f.resident_row_grads.load() == 2 * static_cast<int>(tables));
  CHECK(f.resident_bag_grads.load() == 0);
  CHECK(f.resident_row_updates.load() == 2);  // the private rows, the row sums
  CHECK(f.row_updates.load() == 0);
  std::lock_guard<std::mutex> lock(fakes.made[0]->mu);
  for (const std::string& e : fakes.made[0]->errors) UNSCOPED_INFO(e);
  CHECK(fakes.made[0]->errors.empty());
}

}  // namespace actorrec::trainer
