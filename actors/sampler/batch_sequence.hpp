// BatchSequence: the batch_sampler's core. It cuts a sample stream into
// global batches in epoch order and can restart at any (epoch, batch) with
// identical output, which is what makes the sampler stateless (ARCHITECTURE
// §6: restarted at the last acknowledged batch).
//
// Sources are opened per epoch through a factory, so an epoch's order is
// whatever the source defines for it (a shuffled dataset order, or a
// generator seeded per epoch). Restarting mid-epoch reads and discards the
// samples before the restart point; sources with random access may replace
// this with a seek later without changing any output.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "data/batches/batch.hpp"
#include "data/sample_reader.hpp"

namespace actorrec {

struct BatchPosition {
  uint32_t epoch = 0;
  uint64_t batch = 0;
  bool operator==(const BatchPosition&) const = default;
};

class BatchSequence {
 public:
  // Opens the sample stream of an epoch (nullptr or an error ends the run).
  using SourceFactory = std::function<Result<std::unique_ptr<data::SampleReader>>(uint32_t epoch)>;

  struct Options {
    uint32_t batch_size = 0;   // global batch, > 0
    uint32_t epochs = 1;
    uint64_t max_batches = 0;  // over all epochs; 0 = no limit
    BatchPosition start;       // restart point
    // What the samples are ("data/train.txt"), for the error of an epoch
    // without a single sample.
    std::string source = "the training data";
  };

  BatchSequence(SourceFactory factory, Options options);

  // The next global batch in order, or Ok with done() true at the end. The
  // last batch of an epoch may be smaller than batch_size (kept, not dropped).
  // An epoch without a sample is an error naming the source and, when the
  // reader skipped every record, how many and why (nothing trains on it).
  Status Next(data::Batch* out);

  bool done() const { return done_; }
  BatchPosition position() const { return pos_; }  // of the batch Next() returns next
  uint64_t produced() const { return produced_; }

 private:
  Status OpenEpoch(uint32_t epoch, uint64_t skip_batches);
  Status Fill(size_t n, data::SampleBlock* out);

  SourceFactory factory_;
  Options options_;
  BatchPosition pos_;
  std::unique_ptr<data::SampleReader> reader_;
  data::SampleBlock scratch_;
  uint64_t produced_ = 0;
  bool done_ = false;
};

}  // namespace actorrec
