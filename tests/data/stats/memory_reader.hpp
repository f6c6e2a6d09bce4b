// MemoryReader: a SampleReader over a block in memory that returns reads of
// varying sizes (callers must not depend on full reads), for stats tests.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "data/sample_reader.hpp"

namespace actorrec::testing {

class MemoryReader : public data::SampleReader {
 public:
  MemoryReader(data::DatasetSchema schema, data::SampleBlock block, std::vector<size_t> read_sizes = {})
      : schema_(std::move(schema)), block_(std::move(block)), sizes_(std::move(read_sizes)) {}

  const data::DatasetSchema& schema() const override { return schema_; }
  const data::BadRecords& bad_records() const override { return bad_; }

  Status Next(size_t max_samples, data::SampleBlock* out) override {
    out->Reset(schema_);
    size_t n = std::min(max_samples, block_.size() - next_);
    if (!sizes_.empty()) n = std::min(n, sizes_[calls_++ % sizes_.size()]);
    out->Append(block_, next_, next_ + n);
    next_ += n;
    return Status::Ok();
  }

 private:
  data::DatasetSchema schema_;
  data::SampleBlock block_;
  std::vector<size_t> sizes_;
  size_t next_ = 0;
  size_t calls_ = 0;
  data::BadRecords bad_;
};

}  // namespace actorrec::testing
