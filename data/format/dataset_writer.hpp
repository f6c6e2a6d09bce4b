// DatasetWriter: streams SampleBlocks into an actorrec dataset file.
//
// (1) Memory is bounded: one chunk of samples is buffered, plus its encoding.
// (2) Atomic: everything goes to PATH.tmp; only Finish() fsyncs it and renames
//     it over PATH. A writer destroyed before Finish, or after an error,
//     removes PATH.tmp and leaves PATH as it was.
// (3) Errors are sticky: after one, every call returns it.
// Not thread-safe: one thread appends.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data::format {

struct DatasetWriterOptions {
  // The unit of checksumming, of the writer's buffer, of lazy verification
  // and of the shuffle's locality (epoch_order.hpp). 16384 Criteo samples
  // (160 bytes each) are 2.6 MB: the writer holds about twice that, and a
  // reader's first touch of a chunk checksums that much. Larger chunks give
  // fewer index entries; smaller ones a finer shuffle window.
  uint32_t samples_per_chunk = 16384;
  // Per table, whether it is multi-hot (offsets stored) or single-hot
  // (exactly one id per sample, no offsets). Empty: decided from the first
  // chunk, and a later sample with other than one id in a table found
  // single-hot is refused. Pass it when the source knows.
  std::vector<bool> multi_hot;
};

class DatasetWriter {
 public:
  static Result<std::unique_ptr<DatasetWriter>> Create(const std::string& path, const DatasetSchema& schema,
                                                       DatasetWriterOptions options = {});
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Adds all samples of `block` (shaped for the schema). Refuses row ids
  // outside their table and bags that break a table's single-hot flag.
  Status Append(const SampleBlock& block);

  // Writes the last chunk, the index, the footer and the header, fsyncs and
  // renames the file into place. Returns the file's size in bytes.
  Result<uint64_t> Finish();

  uint64_t samples() const { return num_samples_ + chunk_.size(); }

 private:
  DatasetWriter(std::string path, DatasetSchema schema, DatasetWriterOptions options, int fd);
  Status CheckBlock(const SampleBlock& block) const;
  Status CheckSingleHot(const SampleBlock& block, size_t begin, size_t end) const;
  Status FlushChunk();
  Status WriteAll(const std::string& bytes);
  Status Fail(Status status);

  const std::string path_;
  const std::string tmp_path_;
  const DatasetSchema schema_;
  const uint32_t samples_per_chunk_;
  std::vector<bool> multi_hot_;
  bool multi_hot_decided_;
  int fd_;
  uint64_t offset_;  // where the next chunk goes
  uint64_t num_samples_ = 0;  // in chunks written
  SampleBlock chunk_;
  std::string encoded_;
  std::string index_;
  Status status_;
  bool finished_ = false;
};

}  // namespace actorrec::data::format
