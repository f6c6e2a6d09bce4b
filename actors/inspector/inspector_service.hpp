// The inspector service of `actorrec train`: the board (board.hpp) served
// over HTTP on its own thread (http/server.hpp).
//
//   GET /                the web page (embedded, no outside resources)
//   GET /api/snapshot    the board as JSON
//   GET /api/text        the essentials as text (`actorrec inspect`)
//   GET /api/events      Server-Sent Events: the snapshot whenever it changed
//   GET /metrics         Prometheus text
//   GET /healthz         "ok"
//
// Bound to loopback unless configured otherwise; on any other address every
// request needs the token InspectorToken derives from the cluster secret
// (`?token=` or `Authorization: Bearer`), and without a secret the service
// does not start.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "actors/inspector/board.hpp"
#include "base/status.hpp"
#include "http/server.hpp"

namespace actorrec::inspector {

// The embedded page (page.html).
std::string_view PageHtml();

// Hex of HMAC-SHA256(secret, "actorrec inspector"), cut to 32 characters.
std::string InspectorToken(std::string_view secret);

// Whether `host` names this machine's loopback only.
bool IsLoopback(const std::string& host);

// The answer to one request: the functional core of the service. `token`
// empty: none is needed.
http::Response Route(const Board& board, const http::Request& request, const std::string& token);

class InspectorService {
 public:
  // `address` is HOST:PORT (port 0: a free one). InvalidArgument for a bad
  // address or a non-local one without a secret; IoError when it cannot
  // bind.
  static Result<std::unique_ptr<InspectorService>> Start(const std::string& address, const std::string& secret,
                                                         std::shared_ptr<const Board> board);
  // What to open: http://HOST:PORT/ (and ?token=... when one is needed).
  std::string url() const;
  http::Server::Counters counters() const { return server_->counters(); }

 private:
  InspectorService() = default;
  std::shared_ptr<const Board> board_;
  std::unique_ptr<http::Server> server_;
  std::string token_;
};

}  // namespace actorrec::inspector
