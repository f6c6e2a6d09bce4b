// BadRecordLog: applies a BadRecordPolicy to the bad records a reader finds.
//
// Every reader funnels each bad record through Report(), so the two policies
// behave the same everywhere: under kFail the record's message becomes the
// stream's InvalidArgument status; under kSkip it is counted by reason and the
// first message is kept. Nothing a reader drops bypasses this class.
#pragma once

#include <string>
#include <string_view>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::readers {

class BadRecordLog {
 public:
  explicit BadRecordLog(BadRecordPolicy policy) : policy_(policy) {}

  // `where` names the file and line ("train.txt:7") or sample; `reason` is the
  // short key counted in BadRecords::by_reason ("wrong column count");
  // `detail` says what was expected and what was found. Returns Ok when the
  // record was counted (skip) or the error to end the stream with (fail).
  Status Report(std::string_view where, std::string_view reason, std::string_view detail);

  BadRecordPolicy policy() const { return policy_; }
  const BadRecords& records() const { return records_; }

 private:
  BadRecordPolicy policy_;
  BadRecords records_;
};

// "where: reason: detail", the one shape of every reader's error message.
std::string RecordMessage(std::string_view where, std::string_view reason, std::string_view detail);

}  // namespace actorrec::data::readers
