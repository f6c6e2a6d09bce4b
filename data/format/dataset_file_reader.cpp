// Sequential reading of a dataset file, chunk by chunk.
#include "data/format/dataset_file_reader.hpp"

#include <algorithm>

namespace actorrec::data::format {

Result<std::unique_ptr<DatasetFileReader>> DatasetFileReader::Open(const std::string& path, BadRecordPolicy policy) {
  Result<std::unique_ptr<Dataset>> dataset = Dataset::Open(path);
  if (!dataset.ok()) return dataset.status();
  return std::unique_ptr<DatasetFileReader>(new DatasetFileReader(std::move(dataset).value(), policy));
}

Status DatasetFileReader::Next(size_t max_samples, SampleBlock* out) {
  const uint64_t per_chunk = dataset_->samples_per_chunk();
  for (;;) {
    // Read up to the first chunk that fails verification. When it comes
    // first, fail, or skip it and try again, as the policy says.
    const uint64_t end = std::min<uint64_t>(dataset_->size(), next_ + max_samples);
    uint64_t stop = end;
    bool skipped = false;
    for (uint64_t at = next_; at < end && !skipped;) {
      const uint64_t chunk = dataset_->ChunkOf(at);
      const uint64_t chunk_end = std::min<uint64_t>(dataset_->size(), (chunk + 1) * per_chunk);
      Status status = dataset_->VerifyChunk(chunk);
      if (status.ok()) {
        at = chunk_end;
      } else if (at != next_) {
        stop = at;  // deliver what comes before it first
        break;
      } else if (policy_ == BadRecordPolicy::kFail) {
        return status;
      } else {
        // Corruption: damaged bytes; InvalidArgument: a label or dense value
        // no model can train on (ParseChunk).
        const char* reason = status.code() == Status::Code::kCorruption ? "corrupt chunk" : "chunk with bad values";
        bad_records_.skipped += chunk_end - at;
        bad_records_.by_reason[reason] += chunk_end - at;
        if (bad_records_.first.empty()) bad_records_.first = status.message();
        next_ = chunk_end;
        skipped = true;
      }
    }
    if (skipped) continue;
    if (Status s = dataset_->Read(next_, stop, out); !s.ok()) return s;
    next_ = stop;
    return Status::Ok();
  }
}

}  // namespace actorrec::data::format
