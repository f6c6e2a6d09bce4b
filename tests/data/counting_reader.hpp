// A SampleReader of `n` samples whose label is the sample's index and whose
// one table holds row index % 10, in blocks of at most `block`: for tests of
// readers that reorder or split a stream.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "data/sample_reader.hpp"

namespace actorrec::data::testing {

class CountingReader final : public SampleReader {
 public:
  CountingReader(uint64_t n, size_t block) : n_(n), block_(block) { schema_.tables = {{"t", 10}}; }
  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return bad_; }
  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    const uint64_t take = std::min<uint64_t>({max_samples, block_, n_ - next_});
    for (uint64_t i = 0; i < take; ++i, ++next_) {
      out->labels.push_back(static_cast<float>(next_));
      out->tables[0].AppendSingle(static_cast<RowId>(next_ % 10));
    }
    return Status::Ok();
  }

 private:
  uint64_t n_, next_ = 0;
  size_t block_;
  DatasetSchema schema_;
  BadRecords bad_;
};

// The labels `reader` gives, read `max` samples at a time, checking that each
// sample's table row still follows its label (a CountingReader's samples
// stay whole).
inline std::vector<float> DrainLabels(SampleReader& reader, size_t max) {
  std::vector<float> out;
  SampleBlock block;
  for (;;) {
    REQUIRE(reader.Next(max, &block).ok());
    if (block.empty()) return out;
    REQUIRE(block.size() <= max);
    for (size_t i = 0; i < block.size(); ++i) {
      REQUIRE(block.tables[0].values[i] == static_cast<RowId>(static_cast<uint64_t>(block.labels[i]) % 10));
    }
    out.insert(out.end(), block.labels.begin(), block.labels.end());
  }
}

}  // namespace actorrec::data::testing
