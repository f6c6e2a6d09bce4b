// Status and Result<T>: how the functional core reports expected failures.
//
// Three tiers (see ARCHITECTURE and STYLE): expected outcomes are values
// (Status, Result<T>); bad configuration and lost peers are exceptions at the
// shell; our own bugs fail ACTORREC_ASSERT. A Status message always names
// what failed (file, line, key, peer) so that it can be shown to a user as is.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace actorrec {

class Status {
 public:
  // The code says how the caller should react, not what went wrong.
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // the input is malformed: fix the input
    kCorruption,       // stored or received bytes fail a check: refetch / restore
    kNotFound,         // a named thing does not exist
    kIoError,          // the operating system refused: check paths and permissions
    kRefused,          // a peer said no (wrong secret, wrong config)
    kUnavailable,      // a peer is gone or did not answer: retry or recover
    kNotSupported,     // this build or backend cannot do it
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status Refused(std::string msg) { return {Code::kRefused, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status NotSupported(std::string msg) { return {Code::kNotSupported, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corruption: <message>", or "ok".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* CodeName(Status::Code code);

// A value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const;
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

template <class T>
const Status& Result<T>::status() const {
  static const Status kOk;
  return ok() ? kOk : std::get<Status>(v_);
}

[[noreturn]] void AssertFailed(const char* expr, const char* file, int line, const std::string& why);

}  // namespace actorrec

// Our own invariants. Fails loudly with the expression and location; never
// used for input that a user or a peer controls.
#define ACTORREC_ASSERT(expr, why)                                           \
  do {                                                                       \
    if (!(expr)) ::actorrec::AssertFailed(#expr, __FILE__, __LINE__, (why)); \
  } while (false)
