// Routes of the inspector service, and the server that runs them.
#include "actors/inspector/inspector_service.hpp"

#include "base/hmac.hpp"
#include "http/client.hpp"

namespace actorrec::inspector {

std::string InspectorToken(std::string_view secret) {
  return ToHex(HmacSha256(secret, "actorrec inspector")).substr(0, 32);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

http::Response Route(const Board& board, const http::Request& request, const std::string& token) {
  http::Response r;
  if (request.method != "GET" && request.method != "HEAD") {
    r.status = 405;
    r.headers.emplace_back("Allow", "GET, HEAD");
    r.body = "only GET and HEAD are served\n";
    return r;
  }
  if (!token.empty()) {
    std::string given = request.Query("token");
    const std::string auth = request.Header("authorization");
    if (given.empty() && auth.rfind("Bearer ", 0) == 0) given = auth.substr(7);
    if (!DigestEquals(given, token)) {
      r.status = 401;
      r.body = "this inspector needs its token: open the address `actorrec train` printed, with ?token=…\n";
      return r;
    }
  }
  const std::string_view path = request.Path();
  if (path == "/" || path == "/index.html") {
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(PageHtml());
  } else if (path == "/api/snapshot") {
    r.content_type = "application/json";
    r.body = board.Json();
  } else if (path == "/api/text") {
    r.body = board.Text();
  } else if (path == "/api/events") {
    r.content_type = "text/event-stream";
    r.stream = true;
  } else if (path == "/metrics") {
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = board.Prometheus();
  } else if (path == "/healthz") {
    r.body = "ok\n";
  } else {
    r.status = 404;
    r.body = "no such page; try /, /api/snapshot, /api/events or /metrics\n";
  }
  return r;
}

Result<std::unique_ptr<InspectorService>> InspectorService::Start(const std::string& address,
                                                                  const std::string& secret,
                                                                  std::shared_ptr<const Board> board) {
  http::ServerOptions options;
  if (Status s = http::SplitHostPort(address, &options.host, &options.port); !s.ok()) return s;
  std::unique_ptr<InspectorService> service(new InspectorService());
  if (!IsLoopback(options.host)) {
    if (secret.empty()) {
      return Status::InvalidArgument("the inspector address " + address +
                                     " is not loopback: it needs cluster.secret, from which its token is derived "
                                     "(or use 127.0.0.1)");
    }
    service->token_ = InspectorToken(secret);
  }
  service->board_ = board;
  // The stream sends a snapshot only when the board changed since the last
  // one: at most one render per period, whatever the number of clients.
  auto sent = std::make_shared<uint64_t>(~uint64_t{0});
  options.stream_period = std::chrono::milliseconds(500);
  options.stream_source = [board, sent]() -> std::string {
    const uint64_t v = board->version();
    if (v == *sent) return {};
    *sent = v;
    return board->Json();
  };
  const std::string token = service->token_;
  auto server = http::Server::Start(std::move(options), [board, token](const http::Request& r, const std::string&) {
    return Route(*board, r, token);
  });
  if (!server.ok()) return Status::IoError("inspector: " + server.status().message());
  service->server_ = std::move(server).value();
  return service;
}

std::string InspectorService::url() const {
  const std::string& host = server_->host();
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "http://" + h + ":" + std::to_string(server_->port()) + "/" + (token_.empty() ? "" : "?token=" + token_);
}

}  // namespace actorrec::inspector
