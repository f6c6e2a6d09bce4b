// BatchRows: slices cover the batch, dedup keeps every bag.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "actors/oracle/batch_rows.hpp"
#include "tests/actors/oracle/workload.hpp"

using namespace actorrec;
using namespace actorrec::oracle;
using namespace actorrec::oracle::testing;

TEST_CASE("trainer slices are contiguous, cover the batch and differ by at most one sample", "[oracle]") {
  const uint32_t samples = GENERATE(0u, 1u, 7u, 16384u);
  const uint32_t trainers = GENERATE(1u, 3u, 8u);
  uint32_t next = 0, smallest = UINT32_MAX, largest = 0;
  for (uint32_t w = 0; w < trainers; ++w) {
    const SampleRange r = SliceOf(samples, trainers, w);
    REQUIRE(r.begin == next);
    next = r.end;
    smallest = std::min(smallest, r.end - r.begin);
    largest = std::max(largest, r.end - r.begin);
  }
  REQUIRE(next == samples);
  REQUIRE(largest - smallest <= 1);
}

namespace {

// Checks every slice of `rows` against `batch`: distinct rows in order of
// first use, and inverse and offsets that give back each bag.
void CheckSlices(const data::SampleBlock& batch, uint32_t trainers, const BatchRows& rows) {
  const uint32_t samples = static_cast<uint32_t>(batch.size());
  for (uint32_t t = 0; t < batch.tables.size(); ++t) {
    const auto& kjt = batch.tables[t];
    for (uint32_t k = 0; k < trainers; ++k) {
      const SampleRange r = SliceOf(samples, trainers, k);
      const SliceTable& s = rows.slice(k, t);
      std::vector<data::RowId> first_use;
      std::set<data::RowId> seen;
      for (uint32_t p = kjt.offsets[r.begin]; p < kjt.offsets[r.end]; ++p) {
        if (seen.insert(kjt.values[p]).second) first_use.push_back(kjt.values[p]);
      }
      REQUIRE(first_use == s.rows);
      REQUIRE(s.offsets.size() == r.end - r.begin + 1);
      // Single-hot tables keep their offsets unwritten through the dedup.
      REQUIRE(s.offsets.compact() == kjt.offsets.compact());
      for (uint32_t i = r.begin; i < r.end; ++i) {
        REQUIRE(s.offsets[i - r.begin + 1] - s.offsets[i - r.begin] == kjt.offsets[i + 1] - kjt.offsets[i]);
        for (uint32_t q = 0; q < kjt.offsets[i + 1] - kjt.offsets[i]; ++q) {
          REQUIRE(s.rows[s.inverse[s.offsets[i - r.begin] + q]] == kjt.values[kjt.offsets[i] + q]);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("each slice's distinct rows, inverse and offsets give back its bags", "[oracle]") {
  const uint64_t seed = GENERATE(take(3, random(1, 1000000)));
  const uint32_t trainers = GENERATE(1u, 3u);
  const Kernel kernel = GENERATE(Kernel::kBest, Kernel::kPortable);
  // One table per dedup path: few rows (a branch), a direct array, a hash.
  const Workload w = MakeWorkload(seed, Skew::kZipf12, 3, 50, {10, 5000, 100000});
  BatchRowsBuilder builder(w.table_rows, kernel);
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows rows;
    REQUIRE(builder.Build(batch, trainers, &rows).ok());
    CheckSlices(batch, trainers, rows);
  }
}

TEST_CASE("single-hot offsets written out give the same slices as compact ones", "[oracle]") {
  const uint32_t trainers = GENERATE(1u, 3u);
  const Workload w = MakeWorkload(11, Skew::kZipf12, 2, 50, {100});
  BatchRowsBuilder builder(w.table_rows);
  for (const data::SampleBlock& batch : w.batches) {
    REQUIRE(batch.tables[0].offsets.compact());
    data::SampleBlock written = batch;
    written.tables[0].offsets.data();  // the non-const access writes the offsets out
    REQUIRE_FALSE(written.tables[0].offsets.compact());
    BatchRows compact, explicit_offsets;
    REQUIRE(builder.Build(batch, trainers, &compact).ok());
    REQUIRE(builder.Build(written, trainers, &explicit_offsets).ok());
    REQUIRE(compact.slices == explicit_offsets.slices);
    CheckSlices(written, trainers, explicit_offsets);
  }
}

TEST_CASE("the vectorized and the portable dedup build the same slices", "[oracle]") {
  const uint64_t seed = GENERATE(take(4, random(1, 1000000)));
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf08, Skew::kZipf12, Skew::kTop1Percent90);
  const uint32_t trainers = GENERATE(1u, 3u, 8u);
  // Every path (few rows, a direct array, a hash set) with slices of many
  // vectors and a tail.
  const Workload w = MakeWorkload(seed, skew, 4, 1000, {70000, 300000, 100, 2000000, 5000, 3, 32});
  BatchRowsBuilder best(w.table_rows, Kernel::kBest);
  BatchRowsBuilder portable(w.table_rows, Kernel::kPortable);
  REQUIRE_FALSE(portable.vectorized());
  if (!best.vectorized()) WARN("this CPU has no AVX-512: both builders run the portable dedup");
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows a, b;
    REQUIRE(best.Build(batch, trainers, &a).ok());
    REQUIRE(portable.Build(batch, trainers, &b).ok());
    INFO(SkewName(skew) << ", " << trainers << " trainers");
    REQUIRE(a.slices == b.slices);
    CheckSlices(batch, trainers, a);
  }
}

TEST_CASE("slices of more than 4096 ids (a fuller hash set) dedup alike in both kernels", "[oracle]") {
  const Skew skew = GENERATE(Skew::kUniform, Skew::kZipf12);
  const Workload w = MakeWorkload(11, skew, 2, 6000, {100000, 200000});
  BatchRowsBuilder best(w.table_rows, Kernel::kBest);
  BatchRowsBuilder portable(w.table_rows, Kernel::kPortable);
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows a, b;
    REQUIRE(best.Build(batch, 1, &a).ok());
    REQUIRE(portable.Build(batch, 1, &b).ok());
    REQUIRE(a.slices == b.slices);
    CheckSlices(batch, 1, a);
  }
}

TEST_CASE("rows that share a cell of the hash set and repeat within 16 ids", "[oracle]") {
  // 48 one-hot samples: the set has 512 cells, a row's cell is the top 9
  // bits of row × 0x9E3779B1. Pick rows that land on the same cell, and
  // rows on the cells right after it, so that probes run into each other.
  std::vector<data::RowId> same_cell, next_cells;
  for (data::RowId r = 1; same_cell.size() < 6 || next_cells.size() < 4; ++r) {
    const uint32_t cell = (r * 0x9E3779B1u) >> 23;
    if (cell == 100 && same_cell.size() < 6) same_cell.push_back(r);
    if ((cell == 101 || cell == 102) && next_cells.size() < 4) next_cells.push_back(r);
  }
  std::vector<data::RowId> ids;
  for (int k = 0; k < 48; ++k) {
    ids.push_back(k % 3 == 2 ? next_cells[(k * 7) % 4] : same_cell[(k * 5) % (k < 16 ? 3 : 6)]);
  }
  const Workload w = Listed(1u << 24, {ids, ids});
  const Kernel kernel = GENERATE(Kernel::kBest, Kernel::kPortable);
  BatchRowsBuilder builder(w.table_rows, kernel);
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows rows;
    REQUIRE(builder.Build(batch, 1, &rows).ok());
    CheckSlices(batch, 1, rows);
    REQUIRE(rows.slice(0, 0).rows.size() == 8);  // 4 rows of the shared cell, 4 of the next ones
  }
}

TEST_CASE("dedup stays right when its tags start again from zero", "[oracle]") {
  const Kernel kernel = GENERATE(Kernel::kBest, Kernel::kPortable);
  const Workload w = MakeWorkload(7, Skew::kZipf12, 6, 400, {20, 50, 5000, 100000});
  BatchRowsBuilder builder(w.table_rows, kernel);
  // A batch holds 400 + about 3 × 400 × 1.5 ids: the second batch wraps.
  builder.StartTagsAt(UINT32_MAX - 3000);
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows rows;
    REQUIRE(builder.Build(batch, 2, &rows).ok());
    CheckSlices(batch, 2, rows);
  }
}

TEST_CASE("a row id beyond its table is refused with its place", "[oracle]") {
  Workload w = MakeWorkload(1, Skew::kUniform, 1, 4, {10, 20});
  w.batches[0].tables[1].values.push_back(20);
  w.batches[0].tables[1].offsets.back() += 1;
  BatchRowsBuilder builder(w.table_rows);
  BatchRows rows;
  const Status s = builder.Build(w.batches[0], 2, &rows);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  REQUIRE_THAT(s.message(), Catch::Contains("table 1") && Catch::Contains("row 20"));
}

TEST_CASE("offsets that decrease are refused, also where they would reach past the values", "[oracle]") {
  const uint32_t trainers = GENERATE(1u, 2u, 4u);
  Workload w = MakeWorkload(3, Skew::kUniform, 1, 8, {10, 20});
  auto& kjt = w.batches[0].tables[1];
  SECTION("a dip in the middle") {
    std::swap(kjt.offsets[3], kjt.offsets[5]);
    if (kjt.offsets[3] == kjt.offsets[5]) kjt.offsets[3] += 1;  // equal bags would not dip
  }
  SECTION("a jump past the values, then back") {
    kjt.offsets[2] = static_cast<uint32_t>(kjt.values.size()) + 1000;
  }
  BatchRowsBuilder builder(w.table_rows);
  BatchRows rows;
  const Status s = builder.Build(w.batches[0], trainers, &rows);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  REQUIRE_THAT(s.message(), Catch::Contains("table 1: offsets decrease"));
}

namespace {

// 96 samples in sessions of 4: tables 0 and 1 (multi-hot) repeat within a
// session, table 2 (single-hot) changes every sample.
data::SampleBlock SessionBatch() {
  data::SampleBlock b;
  b.Reset(0, 3);
  for (uint32_t i = 0; i < 96; ++i) {
    const uint32_t user = i / 4;
    b.labels.push_back(0);
    for (uint32_t q = 0; q <= user % 3; ++q) b.tables[0].values.push_back((user * 7 + q) % 50);
    b.tables[0].CloseBag();
    for (uint32_t q = 0; q <= user % 2; ++q) b.tables[1].values.push_back((user + q) % 9);
    b.tables[1].CloseBag();
    b.tables[2].AppendSingle(i % 13);
  }
  return b;
}

// Table t's bag of sample i of slice w, as the slice describes it: through
// the group's bag_of when the table is grouped.
std::vector<data::RowId> PlannedBag(const BatchRows& rows, uint32_t w, uint32_t t, uint32_t i) {
  uint32_t bag = i;
  for (uint32_t g = 0; g < rows.group_count; ++g) {
    const BagGroup& group = rows.groups[size_t{w} * rows.group_count + g];
    if (std::find(group.tables.begin(), group.tables.end(), t) != group.tables.end()) bag = group.bag_of[i];
  }
  const SliceTable& s = rows.slice(w, t);
  std::vector<data::RowId> out;
  for (uint32_t p = s.offsets[bag]; p < s.offsets[bag + 1]; ++p) out.push_back(s.rows[s.inverse[p]]);
  return out;
}

}  // namespace

TEST_CASE("a dedup group plans each slice's distinct bag tuples once, and every sample finds its bags", "[oracle][dedup]") {
  const data::SampleBlock batch = SessionBatch();
  const uint32_t trainers = GENERATE(1u, 3u);
  BatchRowsBuilder builder({50, 9, 13});
  builder.SetDedupGroups({{0, 1}});
  BatchRows rows;
  REQUIRE(builder.Build(batch, trainers, &rows).ok());
  REQUIRE(rows.group_count == 1);
  for (uint32_t w = 0; w < trainers; ++w) {
    const SampleRange r = SliceOf(96, trainers, w);
    const BagGroup& group = rows.groups[w];
    REQUIRE(group.tables == std::vector<uint32_t>{0, 1});
    REQUIRE(group.bag_of.size() == r.end - r.begin);
    // Sessions of 4 cut by the slice's ends: one tuple per session piece.
    const uint32_t tuples = (r.end - 1) / 4 - r.begin / 4 + 1;
    CHECK(rows.slice(w, 0).offsets.size() == tuples + 1);
    CHECK(rows.slice(w, 1).offsets.size() == tuples + 1);
    CHECK(rows.slice(w, 2).offsets.size() == r.end - r.begin + 1);  // not grouped: per sample
    for (uint32_t i = r.begin; i < r.end; ++i) {
      for (uint32_t t = 0; t < 3; ++t) {
        const auto& kjt = batch.tables[t];
        const std::vector<data::RowId> want(kjt.values.begin() + kjt.offsets[i], kjt.values.begin() + kjt.offsets[i + 1]);
        REQUIRE(PlannedBag(rows, w, t, i - r.begin) == want);
      }
    }
  }
  // The sampler's IKJT (every other table alone) gives the same rows.
  const data::Ikjt ikjt = data::Deduplicate(batch.tables, data::CompleteGroups({{0, 1}}, 3));
  BatchRows from_ikjt;
  REQUIRE(builder.Build(batch, trainers, &from_ikjt, &ikjt).ok());
  CHECK(from_ikjt.slices == rows.slices);
  CHECK(from_ikjt.groups == rows.groups);
}

TEST_CASE("a dedup group of a single-hot and a multi-hot table is refused naming the key", "[oracle][dedup]") {
  BatchRowsBuilder builder({50, 9, 13});
  builder.SetDedupGroups({{1}, {0, 2}});
  BatchRows rows;
  const Status st = builder.Build(SessionBatch(), 2, &rows);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("dataset.dedup_groups[1].tables") && Catch::Contains("single-hot"));
}
