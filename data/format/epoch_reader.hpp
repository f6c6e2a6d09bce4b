// EpochReader: a SampleReader over one epoch of a dataset file in its
// deterministic (shuffled) epoch order, batch by batch. The batch_sampler
// opens one per epoch, so same (seed, epoch) gives the same batches on any
// machine, and a restart at (epoch, batch) reproduces them.
#pragma once

#include <memory>

#include "data/format/dataset.hpp"
#include "data/format/epoch_order.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::format {

class EpochReader final : public SampleReader {
 public:
  // `options.batch_size` should equal the consumer's batch size: each batch
  // of the order is then exactly one batch downstream.
  EpochReader(std::shared_ptr<const Dataset> dataset, const EpochOptions& options, uint64_t epoch);

  const DatasetSchema& schema() const override { return dataset_->schema(); }
  Status Next(size_t max_samples, SampleBlock* out) override;
  const BadRecords& bad_records() const override { return bad_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  EpochOrder order_;
  uint64_t next_batch_ = 0;
  SampleBlock pending_;      // the current order batch
  size_t pending_used_ = 0;  // samples of pending_ already returned
  BadRecords bad_;
};

}  // namespace actorrec::data::format
