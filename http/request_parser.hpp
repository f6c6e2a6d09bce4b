// HTTP/1.1 request heads, parsed from bytes as they arrive: the functional
// core of the inspector's server (http/server.hpp is its libuv shell).
//
// Only what a dashboard needs: a request line and headers, no body (a
// request announcing one is refused). The parser holds at most
// `max_head_bytes` of a request head; beyond that it stops with 431, so a
// client cannot make the server buffer without bound.
//
// Thread-safety: none; one parser per connection.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace actorrec::http {

struct Request {
  std::string method;   // "GET", "HEAD"
  std::string target;   // "/api/snapshot?x=1", as sent
  int minor_version = 1;  // HTTP/1.<minor>
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed

  // The first header named `name` (lower case), or empty.
  std::string Header(std::string_view name) const;
  // The target without its query string.
  std::string_view Path() const;
  // The value of query parameter `key` ("?token=abc"), or empty.
  std::string Query(std::string_view key) const;
  // Whether the connection stays open after the response (HTTP/1.1 unless
  // "Connection: close"; HTTP/1.0 only with "Connection: keep-alive").
  bool KeepAlive() const;
};

class RequestParser {
 public:
  enum class State { kIncomplete, kComplete, kError };

  // A head (request line and headers) longer than this is refused with 431.
  // 16 KiB: browsers send well under 8 KiB; the limit bounds the memory a
  // connection holds (the server also bounds the number of connections).
  static constexpr size_t kDefaultMaxHeadBytes = 16 * 1024;

  explicit RequestParser(size_t max_head_bytes = kDefaultMaxHeadBytes) : max_head_bytes_(max_head_bytes) {}

  // Appends `bytes` and parses as far as they go. kComplete: request() holds
  // the request, and bytes after its head stay buffered for the next one
  // (call Next()). kError: error_status() and error() say why; the
  // connection should get that status and be closed.
  State Feed(std::string_view bytes);

  // After kComplete: forgets the request and parses what is buffered after it.
  State Next();

  State state() const { return state_; }
  const Request& request() const { return request_; }
  // 400 malformed, 431 head too large, 413 a body, 501 chunked body,
  // 505 not HTTP/1.x.
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }
  // Bytes buffered and not yet part of a parsed request.
  size_t buffered() const { return buffer_.size(); }

 private:
  State Parse();
  State Fail(int status, std::string why);
  bool ParseRequestLine(std::string_view line);
  bool ParseHeader(std::string_view line);

  const size_t max_head_bytes_;
  std::string buffer_;
  size_t scanned_ = 0;  // bytes of buffer_ already searched for the head's end
  State state_ = State::kIncomplete;
  Request request_;
  int error_status_ = 0;
  std::string error_;
};

// The reason phrase of a status code ("Not Found").
const char* ReasonPhrase(int status);

}  // namespace actorrec::http
