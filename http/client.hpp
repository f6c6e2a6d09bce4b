// A blocking HTTP/1.1 GET for `actorrec inspect` and the tests: one
// request per connection, with a deadline for the whole exchange.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace actorrec::http {

struct ClientResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// GET `target` from host:port. Unavailable naming the address when it
// cannot connect, or when no complete answer came within `timeout`.
Result<ClientResponse> Get(const std::string& host, uint16_t port, const std::string& target,
                           std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Sends `raw` bytes as they are and returns what came back before the
// server closed or `timeout` passed (for tests of malformed requests).
Result<std::string> Exchange(const std::string& host, uint16_t port, const std::string& raw,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Splits "HOST:PORT" (or "[v6]:PORT"); InvalidArgument naming it otherwise.
Status SplitHostPort(const std::string& address, std::string* host, uint16_t* port);

}  // namespace actorrec::http
