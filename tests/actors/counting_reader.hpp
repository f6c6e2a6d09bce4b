// A SampleReader over synthetic samples 0..n-1 whose content is a function of
// (epoch, index), returning short reads on purpose, for the sampler's tests.
#pragma once

#include <random>

#include "data/sample_reader.hpp"

namespace actorrec::testing {

class CountingReader : public data::SampleReader {
 public:
  CountingReader(uint32_t epoch, uint64_t samples) : epoch_(epoch), samples_(samples), rng_(epoch) {
    schema_.dense_names = {"x"};
    schema_.tables = {{"t0", 7}, {"t1", 1000}};
  }
  const data::DatasetSchema& schema() const override { return schema_; }
  const data::BadRecords& bad_records() const override { return bad_; }

  Status Next(size_t max_samples, data::SampleBlock* out) override {
    out->Reset(schema_);
    // Up to max_samples, sometimes fewer: callers must not rely on full reads.
    const size_t want = std::min<uint64_t>(1 + rng_() % max_samples, samples_ - next_);
    for (size_t k = 0; k < want; ++k, ++next_) {
      out->labels.push_back(static_cast<float>((next_ + epoch_) % 2));
      out->dense.push_back(static_cast<float>(next_) + 0.5f * epoch_);
      out->tables[0].values.push_back(static_cast<data::RowId>(next_ % 7));
      out->tables[0].offsets.push_back(static_cast<uint32_t>(out->tables[0].values.size()));
      for (uint64_t j = 0; j < next_ % 3; ++j) out->tables[1].values.push_back(static_cast<data::RowId>(next_ + j));
      out->tables[1].offsets.push_back(static_cast<uint32_t>(out->tables[1].values.size()));
    }
    return Status::Ok();
  }

 private:
  uint32_t epoch_;
  uint64_t samples_;
  uint64_t next_ = 0;
  std::mt19937_64 rng_;
  data::DatasetSchema schema_;
  data::BadRecords bad_;
};

inline auto CountingSource(uint64_t samples) {
  return [samples](uint32_t epoch) -> Result<std::unique_ptr<data::SampleReader>> {
    return std::unique_ptr<data::SampleReader>(std::make_unique<CountingReader>(epoch, samples));
  };
}

}  // namespace actorrec::testing
