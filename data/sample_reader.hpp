// SampleReader: a stream of samples from any source (a raw file, the
// columnar format, the generator), read in blocks with bounded memory.
//
// Bad records follow the policy the reader was opened with: under "fail" the
// first one ends the stream with an InvalidArgument status naming the file
// and line (or chunk); under "skip" it is counted in BadRecords and reading
// goes on. Nothing is dropped without being counted.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data {

enum class BadRecordPolicy { kFail, kSkip };

struct BadRecords {
  uint64_t skipped = 0;
  std::map<std::string, uint64_t> by_reason;  // e.g. "wrong column count" -> 3
  std::string first;                          // the first skipped record's full message

  // Adds `more`'s counts; its `first` only while none is kept.
  void Add(const BadRecords& more) {
    skipped += more.skipped;
    for (const auto& [reason, n] : more.by_reason) by_reason[reason] += n;
    if (first.empty()) first = more.first;
  }
};

class SampleReader {
 public:
  virtual ~SampleReader() = default;
  SampleReader(const SampleReader&) = delete;
  SampleReader& operator=(const SampleReader&) = delete;

  virtual const DatasetSchema& schema() const = 0;

  // Replaces `out` with the next at most `max_samples` samples (out->size()
  // says how many; 0 at the end of the stream). An error status ends the
  // stream and names the file and line or chunk.
  virtual Status Next(size_t max_samples, SampleBlock* out) = 0;

  // Records skipped so far under the skip policy.
  virtual const BadRecords& bad_records() const = 0;

 protected:
  SampleReader() = default;
};

}  // namespace actorrec::data
