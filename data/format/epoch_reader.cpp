// Reading an epoch of a dataset file in its epoch order.
#include "data/format/epoch_reader.hpp"

namespace actorrec::data::format {

EpochReader::EpochReader(std::shared_ptr<const Dataset> dataset, const EpochOptions& options, uint64_t epoch)
    : dataset_(std::move(dataset)), order_(dataset_->Order(options, epoch)) {
  pending_.Reset(dataset_->schema());
}

Status EpochReader::Next(size_t max_samples, SampleBlock* out) {
  out->Reset(dataset_->schema());
  if (pending_used_ == pending_.size()) {
    if (next_batch_ == order_.num_batches()) return Status::Ok();  // end of the epoch
    if (auto st = dataset_->ReadBatch(order_, next_batch_, &pending_); !st.ok()) return st;
    ++next_batch_;
    pending_used_ = 0;
  }
  const size_t n = std::min(max_samples, pending_.size() - pending_used_);
  out->Append(pending_, pending_used_, pending_used_ + n);
  pending_used_ += n;
  return Status::Ok();
}

}  // namespace actorrec::data::format
