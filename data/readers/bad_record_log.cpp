// BadRecordLog: counts or fails on bad records.
#include "data/readers/bad_record_log.hpp"

namespace actorrec::data::readers {

std::string RecordMessage(std::string_view where, std::string_view reason, std::string_view detail) {
  std::string msg;
  msg.reserve(where.size() + reason.size() + detail.size() + 4);
  msg.append(where).append(": ").append(reason);
  if (!detail.empty()) msg.append(": ").append(detail);
  return msg;
}

Status BadRecordLog::Report(std::string_view where, std::string_view reason, std::string_view detail) {
  std::string msg = RecordMessage(where, reason, detail);
  if (policy_ == BadRecordPolicy::kFail) return Status::InvalidArgument(std::move(msg));
  ++records_.skipped;
  ++records_.by_reason[std::string(reason)];
  if (records_.first.empty()) records_.first = std::move(msg);
  return Status::Ok();
}

}  // namespace actorrec::data::readers
