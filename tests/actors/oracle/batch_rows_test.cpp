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

TEST_CASE("each slice's distinct rows, inverse and offsets give back its bags", "[oracle]") {
  const uint64_t seed = GENERATE(take(3, random(1, 1000000)));
  const uint32_t trainers = GENERATE(1u, 3u);
  // One table per dedup path: few rows (a branch), a direct array, a hash.
  const Workload w = MakeWorkload(seed, Skew::kZipf12, 3, 50, {10, 5000, 100000});
  BatchRowsBuilder builder(w.table_rows);
  for (const data::SampleBlock& batch : w.batches) {
    BatchRows rows;
    REQUIRE(builder.Build(batch, trainers, &rows).ok());
    for (uint32_t t = 0; t < 3; ++t) {
      for (uint32_t k = 0; k < trainers; ++k) {
        const SampleRange r = SliceOf(50, trainers, k);
        const SliceTable& s = rows.slice(k, t);
        REQUIRE(std::set<data::RowId>(s.rows.begin(), s.rows.end()).size() == s.rows.size());
        // Distinct rows in order of first use.
        std::vector<data::RowId> first_use;
        const auto& bags = batch.tables[t];
        for (uint32_t p = bags.offsets[r.begin]; p < bags.offsets[r.end]; ++p) {
          if (std::find(first_use.begin(), first_use.end(), bags.values[p]) == first_use.end()) {
            first_use.push_back(bags.values[p]);
          }
        }
        REQUIRE(first_use == s.rows);
        REQUIRE(s.offsets.size() == r.end - r.begin + 1);
        for (uint32_t i = r.begin; i < r.end; ++i) {
          const auto& kjt = batch.tables[t];
          REQUIRE(s.offsets[i - r.begin + 1] - s.offsets[i - r.begin] == kjt.offsets[i + 1] - kjt.offsets[i]);
          for (uint32_t q = 0; q < kjt.offsets[i + 1] - kjt.offsets[i]; ++q) {
            REQUIRE(s.rows[s.inverse[s.offsets[i - r.begin] + q]] == kjt.values[kjt.offsets[i] + q]);
          }
        }
      }
    }
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
