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
  // and of the shuffle's locality (epoch_order.hpp). A file-order batch
  // copies one piece of every column of the chunks it spans; when the chunk
  // is no longer than the batch, the pieces are whole columns, side by side,
  // and the batch is one contiguous run of the file. Measured (format_bench,
  // 1 M Criteo samples, batches of 2048): chunks of 16384 read at 0.47–0.49
  // of a memcpy of the same bytes (26 separate 8 KiB pieces a batch, each a
  // stream the hardware prefetcher starts cold), chunks of 2048 at 0.72–0.75.
  // 2048 Criteo samples (160 bytes each) are 330 KB: index entries cost
  // 8 bytes a chunk (4 MB for the 1.1 billion samples of Criteo Terabyte).
  uint32_t samples_per_chunk = 2048;
  // Per table, whether it is multi-hot (offsets stored) or single-hot
  // (exactly one id per sample, no offsets). Empty: decided from the first
  // chunk, and a later sample with other than one id in a table found
  // single-hot is refused. Pass it when the source knows.
  std::vector<bool> multi_hot;
  // Whether Finish fsyncs the file and its folder (durable once renamed).
  // false only for scratch files nobody keeps after a crash (the parts of
  // a parallel conversion): a sync costs a disk flush of the whole file.
  bool durable = true;
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
  const bool durable_;
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
