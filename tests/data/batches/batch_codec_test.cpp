// Batch frames: KJT and IKJT forms decode to the same batch, and frames whose
// structure is inconsistent are refused with the batch and field named.
#include "messages/batch_codec.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace actorrec;

namespace {

data::Batch RandomBatch(uint64_t seed) {
  std::mt19937_64 rng(seed);
  data::Batch b;
  b.epoch = 2;
  b.index = 17;
  const uint32_t n = 1 + rng() % 64;
  b.first_sample = 17 * 64;
  b.slice_begin = 0;
  b.slice_end = n;
  b.samples.Reset(3, 4);
  for (uint32_t i = 0; i < n; ++i) {
    b.samples.labels.push_back(static_cast<float>(rng() % 2));
    for (int j = 0; j < 3; ++j) b.samples.dense.push_back(static_cast<float>(rng() % 1000) / 7.0f);
    for (auto& t : b.samples.tables) {
      const int len = static_cast<int>(rng() % 3);
      for (int k = 0; k < len; ++k) t.values.push_back(static_cast<data::RowId>(rng() % 5));
      t.offsets.push_back(static_cast<uint32_t>(t.values.size()));
    }
  }
  return b;
}

}  // namespace

TEST_CASE("a batch survives encoding in KJT and in IKJT form", "[data]") {
  const auto seed = GENERATE(take(20, random(1u, 100000u)));
  auto batch = RandomBatch(seed);
  data::Batch kjt_side, ikjt_side;
  REQUIRE(wire::DecodeBatch(wire::EncodeBatch(batch), &kjt_side).ok());
  REQUIRE(kjt_side == batch);
  auto ikjt = data::Deduplicate(batch.samples.tables, {{0, 2}, {1}, {3}});
  REQUIRE(wire::DecodeBatch(wire::EncodeBatch(batch, &ikjt), &ikjt_side).ok());
  REQUIRE(ikjt_side == batch);
}

TEST_CASE("single-hot tables travel without offsets and come back with them", "[data]") {
  auto batch = RandomBatch(11);
  const size_t n = batch.samples.size();
  auto& single = batch.samples.tables[2];
  single.values.clear();
  single.offsets.assign(1, 0);
  for (size_t i = 0; i < n; ++i) {
    single.values.push_back(static_cast<data::RowId>(i % 5));
    single.offsets.push_back(static_cast<uint32_t>(i + 1));
  }
  const auto frame = wire::EncodeBatch(batch);
  auto with_offsets = batch;
  with_offsets.samples.tables[2].values.push_back(0);  // two ids in the last bag: not single-hot
  with_offsets.samples.tables[2].offsets.back() += 1;
  // The single-hot table saves its n + 1 offsets (4 bytes each, in 8-byte words).
  REQUIRE(wire::EncodeBatch(with_offsets).bytes.size() >= frame.bytes.size() + 4 * n);
  data::Batch out;
  REQUIRE(wire::DecodeBatch(frame, &out).ok());
  REQUIRE(out == batch);
  auto ikjt = data::Deduplicate(batch.samples.tables, data::SingletonGroups(4));
  REQUIRE(wire::DecodeBatch(wire::EncodeBatch(batch, &ikjt), &out).ok());
  REQUIRE(out == batch);
  // No samples at all.
  data::Batch empty = batch;
  empty.samples.Reset(3, 4);
  empty.slice_end = 0;
  REQUIRE(wire::DecodeBatch(wire::EncodeBatch(empty), &out).ok());
  REQUIRE(out == empty);
}

TEST_CASE("batch frames with inconsistent structure are refused, naming the batch", "[data]") {
  auto batch = RandomBatch(7);
  data::Batch out;
  SECTION("a label missing") {
    batch.samples.labels.pop_back();
    batch.slice_end = static_cast<uint32_t>(batch.samples.size()) + 1;
    auto st = wire::DecodeBatch(wire::EncodeBatch(batch), &out);
    REQUIRE(st.code() == Status::Code::kCorruption);
    REQUIRE_THAT(st.message(), Catch::Contains("batch 17 of epoch 2"));
  }
  SECTION("offsets that decrease") {
    auto& t = batch.samples.tables[1];
    t.values.assign(4, 1);
    t.offsets.assign(t.offsets.size(), 2);
    t.offsets.front() = 0;
    t.offsets[1] = 3;
    t.offsets.back() = 4;
    auto st = wire::DecodeBatch(wire::EncodeBatch(batch), &out);
    REQUIRE_THAT(st.message(), Catch::Contains("table 1"));
  }
  SECTION("no offsets (one id a bag) but another number of ids") {
    auto& t = batch.samples.tables[3];
    t.values.assign(batch.samples.size() + 1, 1);
    t.offsets.resize(batch.samples.size() + 1);
    for (size_t i = 0; i < t.offsets.size(); ++i) t.offsets[i] = static_cast<uint32_t>(i);
    t.values.pop_back();
    t.values.pop_back();  // n − 1 ids: offsets past the last id; encoded as they are
    auto frame = wire::EncodeBatch(batch);
    auto st = wire::DecodeBatch(frame, &out);
    REQUIRE(st.code() == Status::Code::kCorruption);
  }
  SECTION("an inverse index past the tuples") {
    auto ikjt = data::Deduplicate(batch.samples.tables, data::SingletonGroups(4));
    ikjt.groups[2].inverse[0] = 1000;
    auto st = wire::DecodeBatch(wire::EncodeBatch(batch, &ikjt), &out);
    REQUIRE_THAT(st.message(), Catch::Contains("inverse index 1000"));
  }
  SECTION("truncated bytes") {
    auto frame = wire::EncodeBatch(batch);
    frame.bytes.resize(frame.bytes.size() / 2);
    REQUIRE(wire::DecodeBatch(frame, &out).code() == Status::Code::kCorruption);
  }
}
