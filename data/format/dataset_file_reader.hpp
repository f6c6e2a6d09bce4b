// DatasetFileReader: a dataset file as a SampleReader, in file order, so it
// can be an input wherever a raw-format reader can.
//
// A corrupt chunk is a bad record: under kFail it ends the stream with the
// chunk named; under kSkip its samples are skipped, counted under "corrupt
// chunk" (or "chunk with bad values": a label not 0 or 1, a non-finite dense
// value), and reading goes on with the next chunk. A bad header or index
// fails Open whatever the policy: then nothing in the file can be located.
#pragma once

#include <memory>
#include <string>

#include "data/format/dataset.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::format {

class DatasetFileReader : public SampleReader {
 public:
  static Result<std::unique_ptr<DatasetFileReader>> Open(const std::string& path,
                                                         BadRecordPolicy policy = BadRecordPolicy::kFail);

  const DatasetSchema& schema() const override { return dataset_->schema(); }
  Status Next(size_t max_samples, SampleBlock* out) override;
  const BadRecords& bad_records() const override { return bad_records_; }

  const Dataset& dataset() const { return *dataset_; }

 private:
  DatasetFileReader(std::unique_ptr<Dataset> dataset, BadRecordPolicy policy)
      : dataset_(std::move(dataset)), policy_(policy) {}

  std::unique_ptr<Dataset> dataset_;
  BadRecordPolicy policy_;
  BadRecords bad_records_;
  uint64_t next_ = 0;  // the next sample to return
};

}  // namespace actorrec::data::format
