// Status names and the assertion failure path.
#include "base/status.hpp"

#include <cstdio>

namespace actorrec {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kIoError: return "i/o error";
    case Status::Code::kRefused: return "refused";
    case Status::Code::kUnavailable: return "unavailable";
    case Status::Code::kNotSupported: return "not supported";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

void AssertFailed(const char* expr, const char* file, int line, const std::string& why) {
  std::fprintf(stderr, "actorrec: internal error at %s:%d: %s (%s)\n", file, line, expr, why.c_str());
  std::abort();
}

}  // namespace actorrec
