// Dataset: an actorrec dataset file opened for reading through mmap, with
// random access by sample range and by batch of an EpochOrder.
//
// (1) Open checks the magic, the version, the header, the footer and the
//     index (checksums, and that they agree with the file's size); errors
//     name the file: "not an actorrec dataset", "format version 3 is newer
//     than this build's 1", "truncated: ...", "checksum mismatch in ...".
// (2) A chunk is verified (checksum, then offsets and row ids, which
//     embedding lookups trust) the first time it is read, or all of them at
//     Open with verify_at_open. A corrupt chunk fails every read that touches
//     it with "checksum mismatch in chunk 7 of FILE".
// (3) Thread-safe: reads are const and may run concurrently; two threads
//     reading an unverified chunk at once may both verify it, harmlessly.
// (4) Reads copy the mapped columns into a SampleBlock (whose capacity is
//     reused): a memcpy per column for a range, a gather for a shuffled batch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/format/chunk.hpp"
#include "data/format/epoch_order.hpp"
#include "data/format/layout.hpp"
#include "data/format/mapped_file.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data::format {

struct DatasetOptions {
  // Verify every chunk at Open: reads the whole file once (XXH3 runs at
  // memory speed) so that later reads cannot fail on corruption.
  bool verify_at_open = false;
};

class Dataset {
 public:
  static Result<std::unique_ptr<Dataset>> Open(const std::string& path, DatasetOptions options = {});
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::string& path() const { return path_; }
  const DatasetSchema& schema() const { return header_.schema; }
  uint64_t size() const { return header_.num_samples; }
  uint32_t samples_per_chunk() const { return header_.samples_per_chunk; }
  uint64_t num_chunks() const { return chunk_start_.size() - 1; }
  bool multi_hot(size_t table) const { return header_.multi_hot[table]; }
  uint64_t file_bytes() const { return header_.file_bytes; }

  // The order of `epoch` over this dataset.
  EpochOrder Order(const EpochOptions& options, uint64_t epoch) const {
    return EpochOrder(options, size(), samples_per_chunk(), epoch);
  }

  // Replaces *out with samples [begin, end) in file order.
  Status Read(uint64_t begin, uint64_t end, SampleBlock* out) const;
  // Replaces *out with the given samples, in that order.
  Status ReadSamples(std::span<const uint64_t> samples, SampleBlock* out) const;
  // Replaces *out with batch `batch` of `order`, an order over this dataset.
  Status ReadBatch(const EpochOrder& order, uint64_t batch, SampleBlock* out) const;

  // Verifies chunk c now, if no read has yet.
  Status VerifyChunk(uint64_t chunk) const;
  // The chunk holding `sample`.
  uint64_t ChunkOf(uint64_t sample) const { return sample / header_.samples_per_chunk; }

  // All chunks' bytes as mapped: what a plain sequential read would copy
  // (the benchmark's memcpy baseline).
  std::string_view chunk_bytes() const;

 private:
  Dataset(std::string path, MappedFile file, HeaderInfo header, std::vector<uint64_t> chunk_start);
  // Points *view at chunk c, verifying it first if no read has yet.
  Status View(uint64_t chunk, ChunkView* view) const;

  const std::string path_;
  const MappedFile file_;
  const HeaderInfo header_;
  const std::vector<uint64_t> chunk_start_;  // file offsets; one extra: the index's
  const std::unique_ptr<std::atomic<bool>[]> verified_;
};

}  // namespace actorrec::data::format
