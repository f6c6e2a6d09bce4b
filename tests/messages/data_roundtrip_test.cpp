// Every data-plane kind survives Encode and Open with every field intact, and
// an IKJT expands to the KJT of the same batch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "messages/kinds.hpp"
#include "tests/messages/examples.hpp"

namespace actorrec::wire {
namespace {

using testing::ExampleKjt;
using testing::ExampleRow;
using testing::ExampleTable;
using testing::JaggedTable;
using testing::RowValue;
using testing::ToVector;

void RequireExampleHeader(Batch::Reader b) {
  REQUIRE(b.getEpoch() == 2);
  REQUIRE(b.getIndex() == 7);
  REQUIRE(b.getFirstSample() == 60);
  REQUIRE(b.getSamples() == 4);
  REQUIRE(b.getTrainer() == 1);
  REQUIRE(b.getSliceBegin() == 4);
  REQUIRE(b.getSliceEnd() == 8);
  REQUIRE(b.getNumDense() == 3);
  REQUIRE(ToVector<float>(b.getDense()) ==
          std::vector<float>{0.5f, -1.25f, 3.0f, 0.0f, 1.0f, 2.0f, 1e-3f, -0.0f, 7.5f, 1e6f, -2.5f, 0.25f});
  REQUIRE(std::signbit(b.getDense()[7]));
  REQUIRE(ToVector<float>(b.getLabels()) == std::vector<float>{1.0f, 0.0f, 0.0f, 1.0f});
}

// The reference reading of a KJT: table by table, values and offsets.
std::vector<JaggedTable> ReadKjt(capnp::List<KeyedJagged>::Reader kjt) {
  std::vector<JaggedTable> out;
  for (auto t : kjt) {
    out.push_back({t.getTable(), ToVector<uint64_t>(t.getValues()), ToVector<uint32_t>(t.getOffsets())});
  }
  return out;
}

// The jagged index-select that turns an IKJT into a KJT: for every table of
// every group, sample i takes the bag inverse[i] of that table's unique bags.
std::vector<JaggedTable> ExpandIkjt(capnp::List<InverseKeyedJagged>::Reader groups) {
  std::vector<JaggedTable> out;
  for (auto g : groups) {
    REQUIRE(g.getUnique().size() == g.getTables().size());
    for (unsigned k = 0; k < g.getTables().size(); ++k) {
      auto unique = g.getUnique()[k];
      JaggedTable t{g.getTables()[k], {}, {0}};
      for (uint32_t u : g.getInverse()) {
        REQUIRE(u + 1 < unique.getOffsets().size());
        for (uint32_t p = unique.getOffsets()[u]; p < unique.getOffsets()[u + 1]; ++p) {
          t.values.push_back(unique.getValues()[p]);
        }
        t.offsets.push_back(static_cast<uint32_t>(t.values.size()));
      }
      out.push_back(std::move(t));
    }
  }
  std::sort(out.begin(), out.end(), [](const JaggedTable& a, const JaggedTable& b) { return a.table < b.table; });
  return out;
}

TEST_CASE("a batch with KJT sparse features round-trips every bag", "[messages]") {
  auto frame = testing::MakeBatchKjt();
  auto view = Open(frame);
  REQUIRE(view.ok());
  RequireExampleHeader(view->root());
  REQUIRE(view->root().getSparse().isKjt());
  REQUIRE(ReadKjt(view->root().getSparse().getKjt()) == ExampleKjt());
}

TEST_CASE("a batch with IKJT sparse features round-trips and expands to the same KJT", "[messages]") {
  auto frame = testing::MakeBatchIkjt();
  auto view = Open(frame);
  REQUIRE(view.ok());
  RequireExampleHeader(view->root());
  REQUIRE(view->root().getSparse().isIkjt());
  auto groups = view->root().getSparse().getIkjt();
  REQUIRE(groups.size() == 2);
  REQUIRE(ToVector<uint32_t>(groups[0].getTables()) == std::vector<uint32_t>{0, 1});
  REQUIRE(ToVector<uint64_t>(groups[0].getUnique()[0].getValues()) == std::vector<uint64_t>{11, 42});
  REQUIRE(ToVector<uint32_t>(groups[0].getUnique()[0].getOffsets()) == std::vector<uint32_t>{0, 1, 2});
  REQUIRE(ToVector<uint64_t>(groups[0].getUnique()[1].getValues()) == std::vector<uint64_t>{3, 7, 7});
  REQUIRE(ToVector<uint32_t>(groups[0].getUnique()[1].getOffsets()) == std::vector<uint32_t>{0, 3, 3});
  REQUIRE(ToVector<uint32_t>(groups[0].getInverse()) == std::vector<uint32_t>{0, 0, 1, 0});
  REQUIRE(ToVector<uint32_t>(groups[1].getTables()) == std::vector<uint32_t>{2});
  REQUIRE(ToVector<uint64_t>(groups[1].getUnique()[0].getValues()) == std::vector<uint64_t>{100, 205, 100, 9});
  REQUIRE(ToVector<uint32_t>(groups[1].getUnique()[0].getOffsets()) == std::vector<uint32_t>{0, 1, 3, 4});
  REQUIRE(ToVector<uint32_t>(groups[1].getInverse()) == std::vector<uint32_t>{0, 1, 0, 2});
  REQUIRE(ExpandIkjt(groups) == ExampleKjt());
  // Dedup paid: 9 values instead of the KJT's 18.
  REQUIRE(frame.bytes.size() < testing::MakeBatchKjt().bytes.size());
}

TEST_CASE("a whole global batch from the sampler names no trainer", "[messages]") {
  auto frame = Encode<Batch>([](Batch::Builder b) {
    b.setIndex(3);
    b.setFirstSample(3 * 8);
    b.setSamples(8);
    b.setTrainer(WHOLE_BATCH);
    b.setSliceBegin(0);
    b.setSliceEnd(8);
    b.getSparse().initKjt(0);
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(view->root().getTrainer() == 0xffffffffu);
  REQUIRE(view->root().getSliceEnd() - view->root().getSliceBegin() == view->root().getSamples());
  REQUIRE(view->root().getSparse().isKjt());
  REQUIRE(view->root().getSparse().getKjt().size() == 0);
  REQUIRE(view->root().getDense().size() == 0);
}

std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> ReadRowSlots(capnp::List<RowSlot>::Reader list) {
  std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> out;
  for (auto r : list) out.emplace_back(r.getTable(), r.getRow(), r.getSlot());
  return out;
}

TEST_CASE("a trainer plan round-trips its barrier, prefetch, slot features, sync sets and evictions", "[messages]") {
  using Rs = std::vector<std::tuple<uint32_t, uint64_t, uint32_t>>;
  auto frame = testing::MakePlan();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto p = view->root();
  REQUIRE(p.getBatch() == 12);
  REQUIRE(p.getTrainer() == 1);
  REQUIRE(p.getLookahead() == 2);
  REQUIRE(p.getBarrier() == p.getBatch() - p.getLookahead() - 1);
  REQUIRE(ReadRowSlots(p.getPrefetch()) == Rs{{0, 42, 5}, {2, 205, 6}});
  REQUIRE(ReadRowSlots(p.getPrivatePrefetch()) == Rs{{2, 9, 7}});
  auto f = p.getFeatures();
  REQUIRE(f.size() == 3);
  REQUIRE(f[0].getTable() == 0);
  REQUIRE(ToVector<uint32_t>(f[0].getUniqueSlots()) == std::vector<uint32_t>{0, 5});
  REQUIRE(ToVector<uint32_t>(f[0].getInverse()) == std::vector<uint32_t>{0, 0, 1, 0});
  REQUIRE(ToVector<uint32_t>(f[0].getOffsets()) == std::vector<uint32_t>{0, 1, 2, 3, 4});
  REQUIRE(f[1].getTable() == 1);
  REQUIRE(ToVector<uint32_t>(f[1].getUniqueSlots()) == std::vector<uint32_t>{1, 2});
  REQUIRE(ToVector<uint32_t>(f[1].getInverse()) == std::vector<uint32_t>{0, 1, 1, 0, 1, 1, 0, 1, 1});
  REQUIRE(ToVector<uint32_t>(f[1].getOffsets()) == std::vector<uint32_t>{0, 3, 6, 6, 9});
  REQUIRE(f[2].getTable() == 2);
  REQUIRE(ToVector<uint32_t>(f[2].getUniqueSlots()) == std::vector<uint32_t>{3, 6, 7});
  REQUIRE(ToVector<uint32_t>(f[2].getInverse()) == std::vector<uint32_t>{0, 1, 0, 0, 2});
  REQUIRE(ToVector<uint32_t>(f[2].getOffsets()) == std::vector<uint32_t>{0, 1, 3, 4, 5});
  REQUIRE(ReadRowSlots(p.getPrivateRows()) == Rs{{2, 9, 7}});
  REQUIRE(ReadRowSlots(p.getCritical()) == Rs{{0, 11, 0}, {2, 100, 3}});
  REQUIRE(ReadRowSlots(p.getDelayed()) == Rs{{0, 42, 5}, {1, 3, 1}, {1, 7, 2}, {2, 205, 6}});
  auto e = p.getEvictions();
  REQUIRE(e.size() == 2);
  REQUIRE(e[0].getTable() == 2);
  REQUIRE(e[0].getRow() == 9);
  REQUIRE(e[0].getSlot() == 7);
  REQUIRE(e[0].getWriter() == 1);
  REQUIRE(e[1].getTable() == 1);
  REQUIRE(e[1].getRow() == 3);
  REQUIRE(e[1].getSlot() == 1);
  REQUIRE(e[1].getWriter() == 0);
  REQUIRE(p.getOccupancy() == 8);
}

TEST_CASE("a plan of an early batch has no barrier", "[messages]") {
  auto frame = Encode<TrainerPlan>([](TrainerPlan::Builder p) {
    p.setBatch(1);
    p.setLookahead(4);
    p.setBarrier(-1);
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(view->root().getBarrier() == -1);
  REQUIRE(view->root().getPrefetch().size() == 0);
}

void RequireExampleKeys(capnp::List<RowKey>::Reader keys, uint32_t rows) {
  REQUIRE(keys.size() == rows);
  for (uint32_t i = 0; i < rows; ++i) {
    REQUIRE(keys[i].getTable() == ExampleTable(i));
    REQUIRE(keys[i].getRow() == ExampleRow(i));
  }
}

// Reads row-major float32 rows out of a Data payload the way a cache
// partition does: one memcpy.
std::vector<float> Floats(capnp::Data::Reader data) {
  REQUIRE(data.size() % sizeof(float) == 0);
  std::vector<float> out(data.size() / sizeof(float));
  std::memcpy(out.data(), data.begin(), data.size());
  return out;
}

void RequirePayload(capnp::Data::Reader data, uint32_t rows, uint32_t width) {
  REQUIRE(data.size() == size_t{rows} * width * sizeof(float));
  // In place and aligned for a float (in fact a word) copy.
  REQUIRE(reinterpret_cast<uintptr_t>(data.begin()) % sizeof(capnp::word) == 0);
  auto floats = Floats(data);
  for (uint32_t i = 0; i < rows; ++i)
    for (uint32_t j = 0; j < width; ++j) REQUIRE(floats[size_t{i} * width + j] == RowValue(i, j));
}

TEST_CASE("a row fetch round-trips its request and keys", "[messages]") {
  auto frame = testing::MakeRowFetch();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto f = view->root();
  REQUIRE(f.getRequestId() == 77);
  REQUIRE(f.getBatch() == 12);
  REQUIRE(f.getTrainer() == 1);
  REQUIRE(f.getPartition() == 3);
  RequireExampleKeys(f.getKeys(), 5);
}

TEST_CASE("a rows reply round-trips keys and row-major float rows with their state", "[messages]") {
  auto frame = testing::MakeRows(5, 16, 16);
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE_FALSE(view->copied());
  auto r = view->root();
  REQUIRE(r.getRequestId() == 77);
  REQUIRE(r.getBatch() == 12);
  REQUIRE(r.getDim() == 16);
  REQUIRE(r.getStateWidth() == 16);
  RequireExampleKeys(r.getKeys(), 5);
  RequirePayload(r.getData(), 5, 32);
}

TEST_CASE("a write-back round-trips evicted rows with Adam state", "[messages]") {
  auto frame = testing::MakeWriteBack();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto w = view->root();
  REQUIRE(w.getBatch() == 12);
  REQUIRE(w.getTrainer() == 1);
  REQUIRE(w.getPartition() == 3);
  REQUIRE(w.getDim() == 16);
  REQUIRE(w.getStateWidth() == 32);
  RequireExampleKeys(w.getKeys(), 5);
  RequirePayload(w.getData(), 5, 48);
}

TEST_CASE("a write-back ack round-trips batch, trainer, partition, rows and shard", "[messages]") {
  auto frame = testing::MakeWriteBackAck();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto a = view->root();
  REQUIRE(a.getBatch() == 12);
  REQUIRE(a.getTrainer() == 1);
  REQUIRE(a.getPartition() == 3);
  REQUIRE(a.getRows() == 5);
  REQUIRE(a.getShard() == 2);
}

TEST_CASE("a sync notice round-trips its kind and phase", "[messages]") {
  SECTION("the example: delayed sync finished") {
    auto frame = testing::MakeSyncNotice();
    auto view = Open(frame);
    REQUIRE(view.ok());
    auto n = view->root();
    REQUIRE(n.getBatch() == 12);
    REQUIRE(n.getKind() == SyncNotice::Kind::DELAYED);
    REQUIRE(n.getTrainer() == 1);
    REQUIRE(n.getRows() == 2);
    REQUIRE(n.getBytes() == 128);
    REQUIRE(n.getPhase() == SyncNotice::Phase::FINISHED);
  }
  SECTION("every kind and phase") {
    auto kind = GENERATE(SyncNotice::Kind::DENSE, SyncNotice::Kind::CRITICAL, SyncNotice::Kind::DELAYED);
    auto phase = GENERATE(SyncNotice::Phase::STARTED, SyncNotice::Phase::FINISHED);
    auto frame = Encode<SyncNotice>([&](SyncNotice::Builder n) {
      n.setBatch(-1);
      n.setKind(kind);
      n.setPhase(phase);
      n.setBytes(uint64_t{1} << 40);
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().getBatch() == -1);
    REQUIRE(view->root().getKind() == kind);
    REQUIRE(view->root().getPhase() == phase);
    REQUIRE(view->root().getBytes() == (uint64_t{1} << 40));
  }
}

}  // namespace
}  // namespace actorrec::wire
