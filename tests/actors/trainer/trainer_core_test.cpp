// TrainerCore's batched row operations against their one-row forms.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "actors/run/run_parts.hpp"
#include "configs/config.hpp"
#include "data/gen/random.hpp"
#include "tests/actors/trainer/test_config.hpp"

namespace actorrec::trainer {
namespace {

std::unique_ptr<RunParts> Parts(const Case& c) {
  auto parts = RunParts::Create(config::ParseConfig(ConfigText(c), "trainer_core.toml"));
  REQUIRE(parts.ok());
  return std::move(parts).value();
}

bool SameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

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
  // Four samples; table t's bags use slots 10t and 10t + 1 (sample i: slot 10t + i % 2).
  data::SampleBlock samples;
  samples.Reset(3, tables);
  std::vector<oracle::TableFeatures> features(tables);
  for (uint32_t i = 0; i < 4; ++i) {
    samples.labels.push_back(static_cast<float>(i % 2));
    for (int j = 0; j < 3; ++j) samples.dense.push_back(0.25f * static_cast<float>(i + j));
  }
  for (uint32_t t = 0; t < tables; ++t) {
    features[t].table = t;
    features[t].unique_slots = {10 * t, 10 * t + 1};
    features[t].inverse = {0, 1, 0, 1};
    features[t].offsets = {0, 1, 2, 3, 4};
  }
  core.Forward(samples, features);
  core.Backward(samples, features, 0.25f);

  // Touched and untouched rows, more than PackRowGrads prefetches ahead.
  std::vector<oracle::RowSlot> rows;
  for (uint32_t i = 0; i < 24; ++i) rows.push_back({0, i, i % 2 == 0 ? 10 * (i / 2 % tables) : 40 + i});  // 41..63: untouched
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

}  // namespace actorrec::trainer
