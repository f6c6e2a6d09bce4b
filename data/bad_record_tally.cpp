// Adding up bad records across readers.
#include "data/bad_record_tally.hpp"

namespace actorrec::data {
namespace {

class TalliedReader final : public SampleReader {
 public:
  TalliedReader(std::unique_ptr<SampleReader> reader, std::shared_ptr<BadRecordTally> tally)
      : reader_(std::move(reader)), tally_(std::move(tally)) {}

  const DatasetSchema& schema() const override { return reader_->schema(); }
  const BadRecords& bad_records() const override { return reader_->bad_records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    Status s = reader_->Next(max_samples, out);
    const BadRecords& now = reader_->bad_records();
    if (now.skipped != added_.skipped) {
      BadRecords delta;
      delta.skipped = now.skipped - added_.skipped;
      for (const auto& [reason, count] : now.by_reason) {
        const auto it = added_.by_reason.find(reason);
        const uint64_t before = it == added_.by_reason.end() ? 0 : it->second;
        if (count > before) delta.by_reason[reason] = count - before;
      }
      delta.first = now.first;
      tally_->Add(delta);
      added_ = now;
    }
    return s;
  }

 private:
  std::unique_ptr<SampleReader> reader_;
  std::shared_ptr<BadRecordTally> tally_;
  BadRecords added_;  // what the tally has of this reader
};

}  // namespace

void BadRecordTally::Add(const BadRecords& more) {
  std::lock_guard<std::mutex> lock(mu_);
  total_.Add(more);
}

BadRecords BadRecordTally::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_;
}

std::unique_ptr<SampleReader> Tallied(std::unique_ptr<SampleReader> reader, std::shared_ptr<BadRecordTally> tally) {
  return std::make_unique<TalliedReader>(std::move(reader), std::move(tally));
}

std::string DescribeSkipped(const BadRecords& bad) {
  if (bad.skipped == 0) return "";
  std::string out = "skipped " + std::to_string(bad.skipped) + " bad record(s) (on_bad_record = \"skip\"):\n";
  for (const auto& [reason, count] : bad.by_reason) out += "  " + std::to_string(count) + "  " + reason + "\n";
  return out + "  first: " + bad.first + "\n";
}

Status NoSamples(const std::string& source, const BadRecords& bad) {
  std::string msg = source + " has no samples";
  if (bad.skipped > 0) {
    msg += ": all " + std::to_string(bad.skipped) + " record(s) were bad and skipped (";
    bool first = true;
    for (const auto& [reason, count] : bad.by_reason) {
      msg += (first ? "" : ", ") + std::to_string(count) + " " + reason;
      first = false;
    }
    msg += "; first: " + bad.first + ")";
  }
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace actorrec::data
