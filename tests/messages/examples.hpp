// Realistic example messages shared by the messages tests: each Make* builds a
// frame whose every field is set, to values the round-trip tests spell out.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "messages/kinds.hpp"
#include "messages/text.hpp"

namespace actorrec::wire::testing {

template <class ListBuilder, class T>
void Fill(ListBuilder list, std::initializer_list<T> values) {
  unsigned i = 0;
  for (const T& v : values) list.set(i++, v);
}

template <class T, class ListReader>
std::vector<T> ToVector(ListReader list) {
  std::vector<T> out;
  out.reserve(list.size());
  for (auto v : list) out.push_back(static_cast<T>(v));
  return out;
}

// ---------------------------------------------------------------- batch
//
// Batch 7 of epoch 2, B = 4, trainer 1's slice [4, 8) of a global batch of 8:
// samples 4..7 of the global batch, epoch positions 60..63. Three dense
// features, and three tables with multi-hot bags:
//   table 0 (user id):      {11}      {11}      {42}  {11}
//   table 1 (user history): {3, 7, 7} {3, 7, 7} {}    {3, 7, 7}
//   table 2 (ad id):        {100}     {205, 100} {100} {9}
// Tables 0 and 1 change together (a session), so the IKJT groups them.
inline void FillBatchHeader(Batch::Builder b) {
  b.setEpoch(2);
  b.setIndex(7);
  b.setFirstSample(60);
  b.setSamples(4);
  b.setTrainer(1);
  b.setSliceBegin(4);
  b.setSliceEnd(8);
  b.setNumDense(3);
  Fill(b.initDense(12), {0.5f, -1.25f, 3.0f, 0.0f, 1.0f, 2.0f, 1e-3f, -0.0f, 7.5f, 1e6f, -2.5f, 0.25f});
  Fill(b.initLabels(4), {1.0f, 0.0f, 0.0f, 1.0f});
}

// The expected KJT of the example, table by table.
struct JaggedTable {
  uint32_t table;
  std::vector<uint64_t> values;
  std::vector<uint32_t> offsets;
  friend bool operator==(const JaggedTable&, const JaggedTable&) = default;
};
inline std::vector<JaggedTable> ExampleKjt() {
  return {{0, {11, 11, 42, 11}, {0, 1, 2, 3, 4}},
          {1, {3, 7, 7, 3, 7, 7, 3, 7, 7}, {0, 3, 6, 6, 9}},
          {2, {100, 205, 100, 100, 9}, {0, 1, 3, 4, 5}}};
}

inline Frame<Batch> MakeBatchKjt() {
  return Encode<Batch>([](Batch::Builder b) {
    FillBatchHeader(b);
    auto tables = ExampleKjt();
    auto kjt = b.getSparse().initKjt(static_cast<unsigned>(tables.size()));
    for (unsigned t = 0; t < tables.size(); ++t) {
      kjt[t].setTable(tables[t].table);
      auto values = kjt[t].initValues(static_cast<unsigned>(tables[t].values.size()));
      for (unsigned i = 0; i < values.size(); ++i) values.set(i, tables[t].values[i]);
      auto offsets = kjt[t].initOffsets(static_cast<unsigned>(tables[t].offsets.size()));
      for (unsigned i = 0; i < offsets.size(); ++i) offsets.set(i, tables[t].offsets[i]);
    }
  });
}

// The same sparse features as an IKJT, deduplicated by hand:
//   group {0, 1}: tuples u0 = ({11}, {3, 7, 7}), u1 = ({42}, {}); inverse 0 0 1 0
//   group {2}:    bags u0 = {100}, u1 = {205, 100}, u2 = {9};     inverse 0 1 0 2
inline Frame<Batch> MakeBatchIkjt() {
  return Encode<Batch>([](Batch::Builder b) {
    FillBatchHeader(b);
    auto groups = b.getSparse().initIkjt(2);
    Fill(groups[0].initTables(2), {0u, 1u});
    auto user = groups[0].initUnique(2);
    Fill(user[0].initValues(2), {uint64_t{11}, uint64_t{42}});
    Fill(user[0].initOffsets(3), {0u, 1u, 2u});
    Fill(user[1].initValues(3), {uint64_t{3}, uint64_t{7}, uint64_t{7}});
    Fill(user[1].initOffsets(3), {0u, 3u, 3u});
    Fill(groups[0].initInverse(4), {0u, 0u, 1u, 0u});
    Fill(groups[1].initTables(1), {2u});
    auto ad = groups[1].initUnique(1);
    Fill(ad[0].initValues(4), {uint64_t{100}, uint64_t{205}, uint64_t{100}, uint64_t{9}});
    Fill(ad[0].initOffsets(4), {0u, 1u, 3u, 4u});
    Fill(groups[1].initInverse(4), {0u, 1u, 0u, 2u});
  });
}

// ---------------------------------------------------------------- plan
//
// Batch 12 for trainer 1 with L = 2 (barrier 9), reading the example batch's
// rows (see above) through slots: table 0 rows 11 -> 0, 42 -> 5; table 1 rows
// 3 -> 1, 7 -> 2; table 2 rows 100 -> 3, 205 -> 6, 9 -> 7 (private). Slots
// 0..7 are in use while it runs; rows 9 and (1, 3) are evicted after it.
inline void FillRowSlots(capnp::List<RowSlot>::Builder list,
                         std::initializer_list<std::tuple<uint32_t, uint64_t, uint32_t>> rows) {
  unsigned i = 0;
  for (auto [table, row, slot] : rows) {
    list[i].setTable(table);
    list[i].setRow(row);
    list[i].setSlot(slot);
    ++i;
  }
}

inline Frame<TrainerPlan> MakePlan() {
  return Encode<TrainerPlan>([](TrainerPlan::Builder p) {
    p.setBatch(12);
    p.setTrainer(1);
    p.setLookahead(2);
    p.setBarrier(9);
    FillRowSlots(p.initPrefetch(2), {{0, 42, 5}, {2, 205, 6}});
    FillRowSlots(p.initPrivatePrefetch(1), {{2, 9, 7}});
    auto features = p.initFeatures(3);
    features[0].setTable(0);
    Fill(features[0].initUniqueSlots(2), {0u, 5u});
    Fill(features[0].initInverse(4), {0u, 0u, 1u, 0u});
    Fill(features[0].initOffsets(5), {0u, 1u, 2u, 3u, 4u});
    features[1].setTable(1);
    Fill(features[1].initUniqueSlots(2), {1u, 2u});
    Fill(features[1].initInverse(9), {0u, 1u, 1u, 0u, 1u, 1u, 0u, 1u, 1u});
    Fill(features[1].initOffsets(5), {0u, 3u, 6u, 6u, 9u});
    features[2].setTable(2);
    Fill(features[2].initUniqueSlots(3), {3u, 6u, 7u});
    Fill(features[2].initInverse(5), {0u, 1u, 0u, 0u, 2u});
    Fill(features[2].initOffsets(5), {0u, 1u, 3u, 4u, 5u});
    FillRowSlots(p.initPrivateRows(1), {{2, 9, 7}});
    FillRowSlots(p.initCritical(2), {{0, 11, 0}, {2, 100, 3}});
    FillRowSlots(p.initDelayed(4), {{0, 42, 5}, {1, 3, 1}, {1, 7, 2}, {2, 205, 6}});
    auto evictions = p.initEvictions(2);
    evictions[0].setTable(2);
    evictions[0].setRow(9);
    evictions[0].setSlot(7);
    evictions[0].setWriter(1);
    evictions[1].setTable(1);
    evictions[1].setRow(3);
    evictions[1].setSlot(1);
    evictions[1].setWriter(0);
    p.setOccupancy(8);
  });
}

// ---------------------------------------------------------------- rows

// Float j of row i of an example payload: distinct per (i, j) and exact.
inline float RowValue(uint32_t i, uint32_t j) { return static_cast<float>(i) * 0.5f + static_cast<float>(j) * 0.25f - 3.0f; }

inline std::vector<float> RowPayload(uint32_t rows, uint32_t width) {
  std::vector<float> data(size_t{rows} * width);
  for (uint32_t i = 0; i < rows; ++i)
    for (uint32_t j = 0; j < width; ++j) data[size_t{i} * width + j] = RowValue(i, j);
  return data;
}

// Row key i of an example: tables 0..2 in turn, rows spread over 10^9.
inline uint64_t ExampleRow(uint32_t i) { return uint64_t{i} * 1000003 % 1000000000; }
inline uint32_t ExampleTable(uint32_t i) { return i % 3; }

inline void FillKeys(capnp::List<RowKey>::Builder keys) {
  for (uint32_t i = 0; i < keys.size(); ++i) {
    keys[i].setTable(ExampleTable(i));
    keys[i].setRow(ExampleRow(i));
  }
}

inline void SetPayload(capnp::Data::Builder data, const std::vector<float>& floats) {
  std::memcpy(data.begin(), floats.data(), floats.size() * sizeof(float));
}

inline Frame<RowFetch> MakeRowFetch(uint32_t rows = 5) {
  return Encode<RowFetch>([&](RowFetch::Builder f) {
    f.setRequestId(77);
    f.setBatch(12);
    f.setTrainer(1);
    f.setPartition(3);
    FillKeys(f.initKeys(rows));
  });
}

// `rows` rows of dim 16 with an Adagrad accumulator each (state width 16).
inline Frame<Rows> MakeRows(uint32_t rows = 5, uint32_t dim = 16, uint32_t state_width = 16) {
  return Encode<Rows>([&](Rows::Builder r) {
    r.setRequestId(77);
    r.setBatch(12);
    r.setDim(dim);
    r.setStateWidth(state_width);
    FillKeys(r.initKeys(rows));
    auto floats = RowPayload(rows, dim + state_width);
    SetPayload(r.initData(static_cast<unsigned>(floats.size() * sizeof(float))), floats);
  });
}

inline Frame<WriteBack> MakeWriteBack(uint32_t rows = 5) {
  return Encode<WriteBack>([&](WriteBack::Builder w) {
    w.setBatch(12);
    w.setTrainer(1);
    w.setPartition(3);
    w.setDim(16);
    w.setStateWidth(32);
    FillKeys(w.initKeys(rows));
    auto floats = RowPayload(rows, 48);
    SetPayload(w.initData(static_cast<unsigned>(floats.size() * sizeof(float))), floats);
  });
}

inline Frame<WriteBackAck> MakeWriteBackAck() {
  return Encode<WriteBackAck>([](WriteBackAck::Builder a) {
    a.setBatch(12);
    a.setTrainer(1);
    a.setPartition(3);
    a.setRows(5);
    a.setShard(2);
  });
}

inline Frame<SyncNotice> MakeSyncNotice() {
  return Encode<SyncNotice>([](SyncNotice::Builder n) {
    n.setBatch(12);
    n.setKind(SyncNotice::Kind::DELAYED);
    n.setTrainer(1);
    n.setRows(2);
    n.setBytes(2 * 16 * 4);
    n.setPhase(SyncNotice::Phase::FINISHED);
  });
}

// ---------------------------------------------------------------- control

inline Frame<Heartbeat> MakeHeartbeat(uint64_t seq = 41) {
  return Encode<Heartbeat>([&](Heartbeat::Builder h) {
    h.setMember("node-a");
    h.setSeq(seq);
    h.setSentUnixNanos(1700000000123456789);
    h.setActors(9);
  });
}

inline Frame<Stats> MakeStats() {
  return Encode<Stats>([](Stats::Builder s) {
    s.setActor("trainer[1]");
    s.setRole(Role::TRAINER);
    s.setBatch(12);
    auto stats = s.initStats(2);
    stats[0].setName("cache.occupancy");
    stats[0].setValue(8);
    stats[0].setUnit("rows");
    stats[1].setName("train.throughput");
    stats[1].setValue(1234.5);
    stats[1].setUnit("samples/s");
  });
}

}  // namespace actorrec::wire::testing
