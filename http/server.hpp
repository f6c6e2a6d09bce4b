// A small HTTP/1.1 server on a private libuv loop and thread: the shell
// around RequestParser, serving the inspector (actors/inspector/).
//
// Everything runs on the server's own thread, never on the caller's: the
// handler and the stream source are called there, and must be quick (they
// copy a snapshot; they never wait for training). Bad input costs a bounded
// amount: a request head is at most max_head_bytes, the connections are
// counted in total and per peer address, a client that sends its head too
// slowly gets 408, an idle one is closed, and one that does not read what
// it is sent is dropped once max_pending_output bytes wait for it.
// Malformed requests are answered (400, 431, ...) and logged, at most 20
// lines per 10 s.
//
// Thread-safety: Start and the destructor from one thread; counters() from
// any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.hpp"
#include "http/request_parser.hpp"

namespace actorrec::http {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones
  // A Server-Sent Events stream: the head is sent, then each event the
  // stream source yields, until the client goes (body is ignored).
  bool stream = false;
};

// Called on the server thread for every complete request; `peer` is the
// client's address.
using Handler = std::function<Response(const Request& request, const std::string& peer)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port, chosen by the system
  size_t max_head_bytes = RequestParser::kDefaultMaxHeadBytes;
  // Beyond these a new connection gets 503 and is closed. Each costs a
  // socket and up to max_head_bytes of buffer.
  size_t max_connections = 64;
  size_t max_connections_per_peer = 16;
  // A request whose head has begun must be complete within this (a slow
  // client holding a connection open): 408.
  std::chrono::milliseconds head_timeout{5000};
  // A connection with no request in progress is closed after this.
  std::chrono::milliseconds idle_timeout{30000};
  // A client that leaves this many bytes unread is dropped (a stream client
  // that stopped reading must not make the server buffer without bound).
  size_t max_pending_output = 4u << 20;
  // Every stream_period the stream source is called; a non-empty result is
  // sent to every stream client as one event ("data: <it>\n\n").
  std::chrono::milliseconds stream_period{500};
  std::function<std::string()> stream_source;
};

class Server {
 public:
  // Binds, listens and starts the thread. IoError naming the address when
  // it cannot bind (in use, not an address of this host).
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, Handler handler);
  // Closes every connection and joins the thread.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  const std::string& host() const;

  struct Counters {
    uint64_t requests = 0;      // complete requests handled
    uint64_t bad_requests = 0;  // answered 4xx/5xx by the parser (malformed, too large, ...)
    uint64_t refused = 0;       // connections over a limit (503)
    uint64_t timeouts = 0;      // 408 and idle closes
    uint64_t dropped = 0;       // clients that did not read
  };
  Counters counters() const;

  struct Impl;

 private:
  Server() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace actorrec::http
