// The libuv shell of the HTTP server: accept, read, parse, answer, time out.
#include "http/server.hpp"

#include <uv.h>

#include <pthread.h>

#include <map>
#include <set>
#include <thread>

#include "base/log_rate_limit.hpp"

namespace actorrec::http {
namespace {

using Clock = std::chrono::steady_clock;

struct Connection {
  uv_tcp_t tcp;  // first: the handle's address is the connection's
  Server::Impl* server = nullptr;
  std::unique_ptr<RequestParser> parser;
  std::string peer;
  Clock::time_point last_activity;
  bool head_started = false;
  Clock::time_point head_started_at;
  bool streaming = false;
  bool close_after_write = false;
  // After the last answer the write side is shut down and what the client
  // still sends is read and dropped until it closes (closing at once with
  // unread input would reset the connection and lose the answer).
  bool draining = false;
  Clock::time_point drain_started;
  bool closing = false;
  size_t writes_in_flight = 0;
};

struct WriteReq {
  uv_write_t req;
  std::string data;
  Connection* conn;
};

std::string PeerOf(uv_tcp_t* tcp) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char ip[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    uv_ip4_name(reinterpret_cast<sockaddr_in*>(&addr), ip, sizeof ip);
  } else {
    uv_ip6_name(reinterpret_cast<sockaddr_in6*>(&addr), ip, sizeof ip);
  }
  return ip;
}

std::string Head(const Response& r, bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + ReasonPhrase(r.status) + "\r\n";
  head += "Content-Type: " + r.content_type + "\r\n";
  head += "Cache-Control: no-store\r\n";
  for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
  if (!r.stream) head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  head += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return head;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Handler handler;
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t stop{};
  uv_timer_t sweep{};
  uv_timer_t stream{};
  std::thread thread;
  uint16_t port = 0;
  std::set<Connection*> connections;
  std::map<std::string, size_t> per_peer;
  char read_buffer[64 * 1024];
  LogRateLimit log_limit{20, std::chrono::seconds(10)};
  std::atomic<uint64_t> requests{0}, bad_requests{0}, refused{0}, timeouts{0}, dropped{0};

  void Close(Connection* c) {
    if (c->closing) return;
    c->closing = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) {
      auto* conn = reinterpret_cast<Connection*>(h);
      Impl* self = conn->server;
      self->connections.erase(conn);
      if (auto it = self->per_peer.find(conn->peer); it != self->per_peer.end() && --it->second == 0) {
        self->per_peer.erase(it);
      }
      delete conn;
    });
  }

  void Write(Connection* c, std::string data) {
    if (c->closing) return;
    auto* w = new WriteReq{{}, std::move(data), c};
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    ++c->writes_in_flight;
    const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), &buf, 1, [](uv_write_t* req, int status) {
      auto* wr = reinterpret_cast<WriteReq*>(req);
      Connection* conn = wr->conn;
      delete wr;
      --conn->writes_in_flight;
      if (status < 0) {
        conn->server->Close(conn);
      } else if (conn->close_after_write && conn->writes_in_flight == 0) {
        conn->server->Drain(conn);
      }
    });
    if (rc != 0) {
      --c->writes_in_flight;
      delete w;
      Close(c);
    }
  }

  void Drain(Connection* c) {
    if (c->closing || c->draining) return;
    c->draining = true;
    c->drain_started = Clock::now();
    auto* req = new uv_shutdown_t;
    if (uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&c->tcp), [](uv_shutdown_t* r, int) { delete r; }) != 0) {
      delete req;
      Close(c);
    }
  }

  void Answer(Connection* c, const Response& r, bool keep_alive) {
    if (!keep_alive) c->close_after_write = true;
    std::string out = Head(r, keep_alive);
    if (!r.stream) out += r.body;
    Write(c, std::move(out));
  }

  void Refuse(Connection* c, int status, const std::string& why) {
    Response r;
    r.status = status;
    r.body = std::string(ReasonPhrase(status)) + ": " + why + "\n";
    Answer(c, r, false);
  }

  void OnRead(Connection* c, ssize_t n) {
    if (n < 0) {
      Close(c);
      return;
    }
    if (n == 0) return;
    c->last_activity = Clock::now();
    if (c->streaming || c->close_after_write) return;  // nothing more is read from these
    RequestParser::State state = c->parser->Feed(std::string_view(read_buffer, static_cast<size_t>(n)));
    while (true) {
      if (state == RequestParser::State::kError) {
        ++bad_requests;
        log_limit.Warn("inspector: HTTP " + std::to_string(c->parser->error_status()) + " to " + c->peer + ": " +
                           c->parser->error(),
                       "malformed HTTP requests");
        Refuse(c, c->parser->error_status(), c->parser->error());
        return;
      }
      if (state == RequestParser::State::kIncomplete) {
        c->head_started = c->parser->buffered() > 0;
        if (c->head_started && c->head_started_at == Clock::time_point{}) c->head_started_at = Clock::now();
        if (!c->head_started) c->head_started_at = {};
        return;
      }
      ++requests;
      c->head_started_at = {};
      const Request& req = c->parser->request();
      Response r;
      try {
        r = handler(req, c->peer);
      } catch (const std::exception& e) {
        r = Response{};
        r.status = 500;
        r.body = std::string("internal error: ") + e.what() + "\n";
      }
      if (req.method == "HEAD") r.body.clear();
      if (r.stream) {
        c->streaming = true;
        Answer(c, r, true);
        return;
      }
      const bool keep = req.KeepAlive();
      Answer(c, r, keep);
      if (!keep) return;
      state = c->parser->Next();
    }
  }

  void OnConnection() {
    auto* c = new Connection();
    c->server = this;
    uv_tcp_init(&loop, &c->tcp);
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
      c->peer = "";
      connections.insert(c);
      ++per_peer[c->peer];
      Close(c);
      return;
    }
    c->peer = PeerOf(&c->tcp);
    c->parser = std::make_unique<RequestParser>(options.max_head_bytes);
    c->last_activity = Clock::now();
    connections.insert(c);
    const size_t from_peer = ++per_peer[c->peer];
    if (connections.size() > options.max_connections || from_peer > options.max_connections_per_peer) {
      ++refused;
      log_limit.Warn("inspector: refused a connection from " + c->peer + " (" + std::to_string(connections.size()) +
                         " open, " + std::to_string(from_peer) + " from this peer)",
                     "refused HTTP connections");
      Refuse(c, 503, "too many connections");
      // Read a refused connection too (OnRead drops what it sends), so that
      // its close is seen at once and it stops holding the peer's share,
      // instead of lingering until the sweep's drain timeout.
      if (!c->closing) StartReading(c);
      return;
    }
    StartReading(c);
  }

  void StartReading(Connection* c) {
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* self = reinterpret_cast<Connection*>(h)->server;
          *buf = uv_buf_init(self->read_buffer, sizeof self->read_buffer);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
          auto* conn = reinterpret_cast<Connection*>(s);
          conn->server->OnRead(conn, n);
        });
  }

  void Sweep() {
    const auto now = Clock::now();
    std::vector<Connection*> all(connections.begin(), connections.end());
    for (Connection* c : all) {
      if (c->closing) continue;
      const size_t pending = uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&c->tcp));
      if (pending > options.max_pending_output) {
        ++dropped;
        log_limit.Warn("inspector: dropped " + c->peer + ": " + std::to_string(pending) + " bytes unread",
                       "dropped HTTP clients");
        Close(c);
        continue;
      }
      if (c->draining && now - c->drain_started > std::chrono::seconds(2)) {
        Close(c);
        continue;
      }
      if (c->streaming || c->close_after_write) continue;
      if (c->head_started_at != Clock::time_point{} && now - c->head_started_at > options.head_timeout) {
        ++timeouts;
        log_limit.Warn("inspector: HTTP 408 to " + c->peer + ": request head not complete in " +
                           std::to_string(options.head_timeout.count()) + " ms",
                       "slow HTTP clients");
        Refuse(c, 408, "the request head did not arrive in time");
      } else if (c->writes_in_flight == 0 && now - c->last_activity > options.idle_timeout) {
        ++timeouts;
        Close(c);
      }
    }
    log_limit.WarnHeldBack("HTTP warnings");
  }

  void Stream() {
    bool any = false;
    for (Connection* c : connections) any = any || (c->streaming && !c->closing);
    if (!any || !options.stream_source) return;
    std::string data = options.stream_source();
    if (data.empty()) return;
    const std::string event = "data: " + data + "\n\n";
    std::vector<Connection*> all(connections.begin(), connections.end());
    for (Connection* c : all) {
      if (c->streaming && !c->closing) Write(c, event);
    }
  }
};

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Handler handler) {
  std::unique_ptr<Server> server(new Server());
  server->impl_ = std::make_unique<Impl>();
  Impl& s = *server->impl_;
  s.options = std::move(options);
  s.handler = std::move(handler);
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  if (int rc = uv_loop_init(&s.loop); rc != 0) return Status::IoError(std::string("libuv: ") + uv_strerror(rc));
  auto fail = [&](int rc, const char* what) -> Status {
    uv_close(reinterpret_cast<uv_handle_t*>(&s.listener), nullptr);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
    server->impl_.reset();
    return Status::IoError(std::string("cannot ") + what + " " + where + ": " + uv_strerror(rc));
  };
  uv_tcp_init(&s.loop, &s.listener);
  s.listener.data = &s;
  sockaddr_storage addr{};
  if (s.options.host.find(':') != std::string::npos) {
    if (int rc = uv_ip6_addr(s.options.host.c_str(), s.options.port, reinterpret_cast<sockaddr_in6*>(&addr)); rc != 0) {
      return fail(rc, "read the address");
    }
  } else if (int rc = uv_ip4_addr(s.options.host.c_str(), s.options.port, reinterpret_cast<sockaddr_in*>(&addr));
             rc != 0) {
    return fail(rc, "read the address");
  }
  if (int rc = uv_tcp_bind(&s.listener, reinterpret_cast<sockaddr*>(&addr), 0); rc != 0) return fail(rc, "bind");
  if (int rc = uv_listen(reinterpret_cast<uv_stream_t*>(&s.listener), 64,
                         [](uv_stream_t* l, int status) {
                           if (status == 0) static_cast<Impl*>(l->data)->OnConnection();
                         });
      rc != 0) {
    return fail(rc, "listen on");
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&s.listener, reinterpret_cast<sockaddr*>(&bound), &len);
  s.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  uv_async_init(&s.loop, &s.stop, [](uv_async_t* a) {
    uv_walk(
        a->loop,
        [](uv_handle_t* h, void*) {
          if (uv_is_closing(h)) return;
          if (h->type == UV_TCP && h != reinterpret_cast<uv_handle_t*>(&static_cast<Impl*>(h->loop->data)->listener)) {
            auto* conn = reinterpret_cast<Connection*>(h);
            conn->server->Close(conn);
          } else {
            uv_close(h, nullptr);
          }
        },
        nullptr);
  });
  s.loop.data = &s;
  uv_timer_init(&s.loop, &s.sweep);
  s.sweep.data = &s;
  uv_timer_start(&s.sweep, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->Sweep(); }, 250, 250);
  uv_timer_init(&s.loop, &s.stream);
  s.stream.data = &s;
  const uint64_t period = static_cast<uint64_t>(std::max<int64_t>(10, s.options.stream_period.count()));
  uv_timer_start(&s.stream, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->Stream(); }, period, period);
  s.thread = std::thread([&s] {
    pthread_setname_np(pthread_self(), "http-server");  // for top -H, perf and /proc/<pid>/task/*/comm
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
  });
  return server;
}

Server::~Server() {
  if (!impl_) return;
  uv_async_send(&impl_->stop);
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t Server::port() const { return impl_->port; }
const std::string& Server::host() const { return impl_->options.host; }

Server::Counters Server::counters() const {
  return {impl_->requests.load(), impl_->bad_requests.load(), impl_->refused.load(), impl_->timeouts.load(),
          impl_->dropped.load()};
}

}  // namespace actorrec::http
