// The row messages through their codec: what goes in comes out, and payloads
// whose size disagrees with their keys or the receiver's row format are
// refused with the batch named.
#include <catch2/catch.hpp>

#include <random>

#include "messages/rows_codec.hpp"

namespace actorrec::wire {
namespace {

RowKeys RandomKeys(std::mt19937& rng, size_t n) {
  RowKeys keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(rng() % 26, static_cast<data::RowId>(rng()));
  return keys;
}

}  // namespace

TEST_CASE("RowFetch round-trips its header, barrier and keys", "[messages]") {
  std::mt19937 rng(3);
  for (size_t n : {0, 1, 100}) {
    const RowKeys keys = RandomKeys(rng, n);
    RowFetchHeader h{42, 17, -1, 3, 0};
    for (int64_t barrier : {int64_t{-1}, int64_t{15}}) {
      h.barrier = barrier;
      RowFetchHeader got;
      RowKeys got_keys;
      REQUIRE(DecodeRowFetch(EncodeRowFetch(h, keys), &got, &got_keys).ok());
      CHECK(got.request_id == 42);
      CHECK(got.batch == 17);
      CHECK(got.barrier == barrier);
      CHECK(got.trainer == 3);
      CHECK(got_keys.tables == keys.tables);
      CHECK(got_keys.rows == keys.rows);
    }
  }
}

TEST_CASE("Rows and WriteBack carry row payloads bit for bit", "[messages]") {
  std::mt19937 rng(5);
  const RowKeys keys = RandomKeys(rng, 37);
  RowsHeader h;
  h.request_id = 9;
  h.batch = 4;
  h.trainer = 1;
  h.partition = 0;
  h.dim = 5;
  h.state_width = 3;
  std::vector<float> rows(keys.size() * h.floats());
  for (float& x : rows) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  rows[3] = -0.0f;
  auto fill = [&](float* out) { std::copy(rows.begin(), rows.end(), out); };

  Status filled;
  RowPayload payload;
  // The payload is read in place: the frames must outlive it.
  const auto rows_frame = EncodeRows(h, keys, [&](float* out) { fill(out); return Status::Ok(); }, &filled);
  REQUIRE(DecodeRows(rows_frame, 8, &payload).ok());
  REQUIRE(filled.ok());
  CHECK(payload.header().request_id == 9);
  CHECK(payload.keys().rows == keys.rows);
  std::vector<float> row(8);
  for (size_t i = 0; i < keys.size(); ++i) {
    payload.CopyRow(i, row.data());
    CHECK(std::memcmp(row.data(), rows.data() + i * 8, 8 * sizeof(float)) == 0);
  }

  const auto write_frame = EncodeWriteBack(h, keys, fill);
  REQUIRE(DecodeWriteBack(write_frame, 8, &payload).ok());
  CHECK(payload.header().trainer == 1);
  CHECK(payload.header().batch == 4);
  CHECK(std::memcmp(payload.bytes(), rows.data(), rows.size() * sizeof(float)) == 0);

  // A receiver with another row format refuses, naming the batch.
  Status wrong = DecodeWriteBack(write_frame, 9, &payload);
  CHECK(wrong.code() == Status::Code::kCorruption);
  CHECK_THAT(wrong.message(), Catch::Contains("batch 4"));
}

TEST_CASE("a payload shorter than its keys is Corruption", "[messages]") {
  auto frame = Encode<WriteBack>([](WriteBack::Builder b) {
    b.setBatch(7);
    b.setDim(2);
    b.setStateWidth(0);
    auto keys = b.initKeys(3);
    for (unsigned i = 0; i < 3; ++i) keys[i].setRow(i);
    b.initData(2 * 2 * sizeof(float));  // two rows for three keys
  });
  RowPayload payload;
  Status st = DecodeWriteBack(frame, 2, &payload);
  CHECK(st.code() == Status::Code::kCorruption);
  CHECK_THAT(st.message(), Catch::Contains("batch 7"));
}

TEST_CASE("a row id above 2^32 - 1 is Corruption", "[messages]") {
  auto frame = Encode<RowFetch>([](RowFetch::Builder b) {
    b.setBatch(2);
    b.initKeys(1)[0].setRow(uint64_t{1} << 40);
  });
  RowFetchHeader h;
  RowKeys keys;
  CHECK(DecodeRowFetch(frame, &h, &keys).code() == Status::Code::kCorruption);
}

TEST_CASE("WriteBackAck round-trips", "[messages]") {
  WriteBackAckInfo ack{12, 3, 0, 99, 1}, got;
  REQUIRE(DecodeWriteBackAck(EncodeWriteBackAck(ack), &got).ok());
  CHECK(got.batch == 12);
  CHECK(got.trainer == 3);
  CHECK(got.rows == 99);
  CHECK(got.shard == 1);
}

}  // namespace actorrec::wire
