// BadRecordTally: what every reader of a run skipped, added up while they
// read, and Tallied(), the SampleReader decorator that feeds it. A training
// run opens a reader per epoch, on whichever thread samples, and drops it at
// the epoch's end: the tally outlives them, so the run's summary can say
// what was skipped and why (sample_reader.hpp: nothing dropped uncounted).
//
// Thread-safe: readers add from the sampling thread while the driver reads.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data {

class BadRecordTally {
 public:
  // BadRecords::Add under the lock.
  void Add(const BadRecords& more);
  BadRecords Get() const;

 private:
  mutable std::mutex mu_;
  BadRecords total_;
};

// `reader`, adding to `tally` what it skips, after every Next().
std::unique_ptr<SampleReader> Tallied(std::unique_ptr<SampleReader> reader, std::shared_ptr<BadRecordTally> tally);

// What was skipped, for a log: a line with the total, a line per reason
// ("  7  wrong column count") and the first record's message naming its
// file and line; "" when nothing was.
std::string DescribeSkipped(const BadRecords& bad);

// The error of a read that found no good sample in `source` (a file, "the
// generated data"): "SOURCE has no samples", and when records were skipped,
// how many, why, and the first one's file and line. Reading nothing is never
// a success: a run or a conversion of it would be silently empty.
Status NoSamples(const std::string& source, const BadRecords& bad);

}  // namespace actorrec::data
