// Parsing HTTP/1.1 request heads incrementally, with a bound on their size.
#include "http/request_parser.hpp"

#include <algorithm>
#include <cctype>

namespace actorrec::http {
namespace {

bool IsTokenChar(char c) {
  // RFC 9110 tchar.
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

std::string_view Request::Path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string Request::Query(std::string_view key) const {
  const size_t q = target.find('?');
  if (q == std::string::npos) return {};
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) return eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return {};
}

bool Request::KeepAlive() const {
  const std::string connection = Lower(Header("connection"));
  if (minor_version == 0) return connection == "keep-alive";
  return connection != "close";
}

RequestParser::State RequestParser::Feed(std::string_view bytes) {
  if (state_ == State::kError) return state_;
  // Never hold more than a head's worth plus one read: what lies beyond the
  // limit cannot be part of an acceptable head.
  const size_t room = max_head_bytes_ + 1 > buffer_.size() ? max_head_bytes_ + 1 - buffer_.size() : 0;
  buffer_.append(bytes.substr(0, room));
  if (state_ == State::kComplete) return state_;  // the caller has not taken the request yet
  return Parse();
}

RequestParser::State RequestParser::Next() {
  if (state_ != State::kComplete) return state_;
  request_ = Request{};
  state_ = State::kIncomplete;
  scanned_ = 0;
  return Parse();
}

RequestParser::State RequestParser::Fail(int status, std::string why) {
  state_ = State::kError;
  error_status_ = status;
  error_ = std::move(why);
  buffer_.clear();
  return state_;
}

RequestParser::State RequestParser::Parse() {
  // Empty lines before a request line are ignored (RFC 9112 §2.2).
  size_t skip = 0;
  while (skip < buffer_.size() && (buffer_[skip] == '\r' || buffer_[skip] == '\n')) ++skip;
  if (skip > 0) {
    buffer_.erase(0, skip);
    scanned_ = 0;
  }
  // The head ends at an empty line: "\n\r\n" or "\n\n" (a bare LF is
  // accepted as a line end, as RFC 9112 §2.2 allows).
  size_t end = std::string::npos, body = 0;
  for (size_t i = scanned_ > 2 ? scanned_ - 2 : 0; i < buffer_.size(); ++i) {
    if (buffer_[i] != '\n') continue;
    if (i + 1 < buffer_.size() && buffer_[i + 1] == '\n') {
      end = i;
      body = i + 2;
      break;
    }
    if (i + 2 < buffer_.size() && buffer_[i + 1] == '\r' && buffer_[i + 2] == '\n') {
      end = i;
      body = i + 3;
      break;
    }
  }
  if (end == std::string::npos) {
    scanned_ = buffer_.size();
    if (buffer_.size() > max_head_bytes_) {
      return Fail(431, "request head longer than " + std::to_string(max_head_bytes_) + " bytes");
    }
    return State::kIncomplete;
  }
  if (body > max_head_bytes_) {
    return Fail(431, "request head longer than " + std::to_string(max_head_bytes_) + " bytes");
  }
  std::string_view head = std::string_view(buffer_).substr(0, end + 1);
  bool first = true;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      if (!ParseRequestLine(line)) return state_;
      first = false;
    } else if (!ParseHeader(line)) {
      return state_;
    }
  }
  if (request_.minor_version == 1 && request_.Header("host").empty()) {
    return Fail(400, "an HTTP/1.1 request without a Host header");
  }
  if (!request_.Header("transfer-encoding").empty()) return Fail(501, "request bodies are not accepted");
  const std::string length = request_.Header("content-length");
  if (!length.empty()) {
    if (!std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        length.size() > 18) {
      return Fail(400, "a Content-Length that is not a number");
    }
    if (std::stoull(length) != 0) return Fail(413, "request bodies are not accepted");
  }
  buffer_.erase(0, body);
  scanned_ = 0;
  state_ = State::kComplete;
  return state_;
}

bool RequestParser::ParseRequestLine(std::string_view line) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    Fail(400, "a request line that is not METHOD TARGET VERSION");
    return false;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), IsTokenChar)) {
    Fail(400, "a request method that is not a token");
    return false;
  }
  if (target.empty() || target.front() != '/' ||
      !std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    Fail(400, "a request target that is not an absolute path of printable characters");
    return false;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || !std::isdigit(static_cast<unsigned char>(version[7]))) {
    Fail(400, "a request line without an HTTP version");
    return false;
  }
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1')) {
    Fail(505, "HTTP version " + std::string(version.substr(5)) + " (only 1.0 and 1.1 are served)");
    return false;
  }
  request_.method = method;
  request_.target = target;
  request_.minor_version = version[7] - '0';
  return true;
}

bool RequestParser::ParseHeader(std::string_view line) {
  if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
    Fail(400, "a folded header line (obsolete line folding)");
    return false;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !std::all_of(line.begin(), line.begin() + colon, IsTokenChar)) {
    Fail(400, "a header line that is not NAME: VALUE");
    return false;
  }
  const std::string_view value = Trim(line.substr(colon + 1));
  if (!std::all_of(value.begin(), value.end(),
                   [](char c) { return c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f); })) {
    Fail(400, "a header value with control characters");
    return false;
  }
  if (request_.headers.size() >= 100) {
    Fail(431, "more than 100 header lines");
    return false;
  }
  request_.headers.emplace_back(Lower(line.substr(0, colon)), std::string(value));
  return true;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace actorrec::http
