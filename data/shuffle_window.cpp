#include "data/shuffle_window.hpp"

#include <numeric>
#include <random>
#include <vector>

namespace actorrec::data {
namespace {

class ShuffleWindowReader final : public SampleReader {
 public:
  ShuffleWindowReader(std::unique_ptr<SampleReader> inner, size_t window, uint64_t seed)
      : inner_(std::move(inner)), window_(window), seed_(seed) {}

  const DatasetSchema& schema() const override { return inner_->schema(); }
  const BadRecords& bad_records() const override { return inner_->bad_records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema());
    if (next_ == order_.size()) {
      if (Status s = FillWindow(); !s.ok()) return s;
    }
    // Runs of consecutive positions are appended at once; a shuffled order
    // has few, so mostly one sample at a time.
    while (out->size() < max_samples && next_ < order_.size()) {
      out->Append(buffer_, order_[next_], order_[next_] + 1);
      ++next_;
    }
    return Status::Ok();
  }

 private:
  // Reads the next window and draws its order.
  Status FillWindow() {
    buffer_.Reset(schema());
    while (buffer_.size() < window_) {
      if (Status s = inner_->Next(window_ - buffer_.size(), &block_); !s.ok()) return s;
      if (block_.empty()) break;
      buffer_.Append(block_, 0, block_.size());
    }
    order_.resize(buffer_.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    // Fisher-Yates with our own draw (std::shuffle's use of the engine is
    // the library's choice; this order must be the same everywhere).
    std::mt19937_64 rng(seed_ ^ (0x9e3779b97f4a7c15ULL * (windows_++ + 1)));
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng() % i]);
    next_ = 0;
    return Status::Ok();
  }

  std::unique_ptr<SampleReader> inner_;
  size_t window_;
  uint64_t seed_;
  uint64_t windows_ = 0;
  SampleBlock buffer_, block_;
  std::vector<size_t> order_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<SampleReader> ShuffleWindow(std::unique_ptr<SampleReader> inner, size_t window, uint64_t seed) {
  return std::make_unique<ShuffleWindowReader>(std::move(inner), window == 0 ? 1 : window, seed);
}

}  // namespace actorrec::data
