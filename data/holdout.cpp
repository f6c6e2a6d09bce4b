#include "data/holdout.hpp"

#include <cmath>

#include "data/format/permutation.hpp"

namespace actorrec::data {

bool HeldOut(uint64_t index, double fraction) {
  // Consecutive indices spread over all 64 bits.
  return std::ldexp(static_cast<double>(format::SplitMix64(index) >> 11), -53) < fraction;
}

namespace {

class HoldOutReader final : public SampleReader {
 public:
  HoldOutReader(std::unique_ptr<SampleReader> inner, double fraction, bool held_out_side)
      : inner_(std::move(inner)), fraction_(fraction), side_(held_out_side) {}

  const DatasetSchema& schema() const override { return inner_->schema(); }
  const BadRecords& bad_records() const override { return inner_->bad_records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema());
    // Blocks of the inner stream until this side has something (or the end):
    // an empty block means the end to the caller.
    while (out->size() < max_samples) {
      if (Status s = inner_->Next(max_samples - out->size(), &block_); !s.ok()) return s;
      if (block_.empty()) break;
      // Runs of consecutive kept samples are appended at once.
      size_t run = 0;
      for (size_t i = 0; i < block_.size(); ++i) {
        const bool keep = HeldOut(next_index_++, fraction_) == side_;
        if (!keep) {
          if (run < i) out->Append(block_, run, i);
          run = i + 1;
        }
      }
      if (run < block_.size()) out->Append(block_, run, block_.size());
      if (!out->empty()) break;
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<SampleReader> inner_;
  double fraction_;
  bool side_;
  SampleBlock block_;
  uint64_t next_index_ = 0;
};

}  // namespace

std::unique_ptr<SampleReader> HoldOutSplit(std::unique_ptr<SampleReader> inner, double fraction, bool held_out_side) {
  return std::make_unique<HoldOutReader>(std::move(inner), fraction, held_out_side);
}

}  // namespace actorrec::data
