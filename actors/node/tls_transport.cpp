// CAF's middleman over mutual TLS: a middleman actor whose connect/open make
// TLS scribes and doormen for the BASP broker, and the handshake timer.
#include "actors/node/tls_transport.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman_actor_impl.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>
#include <openssl/err.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "base/cluster_tls.hpp"
#include "base/frame_bound.hpp"
#include "base/log_rate_limit.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;
using caf::io::network::native_socket;
using caf::io::network::rw_state;

// A connection that has not finished its TLS handshake this long after it
// was opened is closed and logged: idle and stalled peers hold nothing.
// Members finish in one round trip (milliseconds), so 10 s leaves room for
// a loaded host and still frees a silent socket soon.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
// The largest message a member accepts from another (a BASP payload); a
// peer announcing more is disconnected before anything is allocated. The
// largest frames are Rows: the cluster benchmark's biggest batch (16384
// samples x 26 tables, each row at most 256 B with its optimizer state)
// makes at most 109 MB, so 1 GiB leaves 9x.
constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 30;
// Refusal lines: at most this many per window, the rest counted.
constexpr uint32_t kRefusalBurst = 20;
constexpr auto kRefusalWindow = std::chrono::seconds(10);
// How often the timer looks for stalled handshakes (and held-back counts).
constexpr auto kTimerTick = std::chrono::milliseconds(100);

struct Connection;

// What every connection of the process shares.
struct Shared {
  std::shared_ptr<ClusterTls> tls;
  uint64_t max_message_bytes = 0;
  std::chrono::milliseconds handshake_timeout{0};
  LogRateLimit refusals{kRefusalBurst, kRefusalWindow};

  std::mutex mu;
  std::set<Connection*> handshaking;  // guarded by mu; a member is alive and its fd open
  std::string mismatch;               // guarded by mu

  void Refused(const std::string& line) { refusals.Warn(line, "refused connection(s)"); }
};

// One socket's TLS session and frame bound. Lives in the scribe's stream
// (through the policy), so it is destroyed before the stream closes the fd:
// while it is in Shared::handshaking, its fd is this connection's.
struct Connection {
  Connection(std::shared_ptr<Shared> s, SSL* session, native_socket socket, bool accepted, std::string who)
      : shared(std::move(s)),
        ssl(session),
        fd(socket),
        server(accepted),
        peer(std::move(who)),
        deadline(Clock::now() + shared->handshake_timeout),
        bound(shared->max_message_bytes) {
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->handshaking.insert(this);
  }
  ~Connection() {
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->handshaking.erase(this);
    }
    SSL_free(ssl);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Advances the handshake; false when it failed (the connection must close).
  bool Handshake() {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl);
    if (r == 1) {
      established = true;
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->handshaking.erase(this);
      }
      member = ClusterTls::PeerMember(ssl);
      spdlog::debug("TLS with {} (member '{}') established", peer, member);
      if (on_established) on_established();
      return true;
    }
    const int kind = SSL_get_error(ssl, r);
    if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) return true;
    const std::string why = ClusterTls::HandshakeFailure(ssl, r);
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->handshaking.erase(this);
      if (timed_out) return false;  // the timer closed it and said so
    }
    if (server) {
      shared->Refused("refused connection from " + peer + ": " + why);
    } else {
      spdlog::warn("TLS with {} failed: {}", peer, why);
      if (ClusterTls::CheckOf(ssl).verify_error != X509_V_OK) {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->mismatch = why;
      }
    }
    return false;
  }

  std::shared_ptr<Shared> shared;
  SSL* ssl;
  const native_socket fd;
  const bool server;
  const std::string peer;  // address:port
  const Clock::time_point deadline;
  std::atomic<bool> timed_out{false};
  bool established = false;
  std::string member;  // the peer's certificate name, once established
  FrameBound bound;
  std::function<void()> on_established;
};

// The protocol policy of caf::io::network::stream_impl: TLS reads and writes,
// the handshake first, every read through the frame bound.
class TlsPolicy {
 public:
  explicit TlsPolicy(std::unique_ptr<Connection> c) : c_(std::move(c)) {}

  rw_state read_some(size_t& result, native_socket, void* buf, size_t len) {
    result = 0;
    if (!c_->established) {
      if (!c_->Handshake()) return rw_state::failure;
      if (!c_->established || len == 0) return rw_state::success;
    }
    // One SSL_read returns at most one record (16 KiB): read on while the
    // socket has more, so that a large message takes few multiplexer turns.
    char* out = static_cast<char*>(buf);
    while (result < len) {
      ERR_clear_error();
      const int n = SSL_read(c_->ssl, out + result, static_cast<int>(std::min<size_t>(len - result, INT_MAX)));
      if (n <= 0) {
        if (Retry(n) || result > 0) break;  // a failure after data shows on the next call
        return rw_state::failure;
      }
      if (auto why = c_->bound.Feed(out + result, static_cast<size_t>(n))) {
        c_->shared->Refused("dropped connection from " + c_->peer + " (member '" + c_->member + "'): " + *why);
        return rw_state::failure;
      }
      result += static_cast<size_t>(n);
    }
    return rw_state::success;
  }

  rw_state write_some(size_t& result, native_socket, const void* buf, size_t len) {
    result = 0;
    // The scribe flushes only after the handshake, so this is not reached
    // before it (a write interest then would spin the multiplexer).
    if (!c_->established) return c_->Handshake() ? rw_state::success : rw_state::failure;
    if (len == 0) return rw_state::indeterminate;
    // Partial writes return after each record: write on until the socket
    // is full (plain TCP's one send() would take it all).
    const char* in = static_cast<const char*>(buf);
    while (result < len) {
      ERR_clear_error();
      const int n = SSL_write(c_->ssl, in + result, static_cast<int>(std::min<size_t>(len - result, INT_MAX)));
      if (n <= 0) {
        if (Retry(n) || result > 0) break;
        return rw_state::failure;
      }
      result += static_cast<size_t>(n);
    }
    return rw_state::success;
  }

  // Decrypted bytes OpenSSL holds are invisible to the socket's poll.
  bool must_read_more(native_socket, size_t threshold) {
    return c_->established && static_cast<size_t>(SSL_pending(c_->ssl)) >= threshold;
  }

 private:
  // True when the call only has to wait for the socket; false when the
  // connection is closed or broken (CAF reports it lost).
  bool Retry(int ret) {
    const int kind = SSL_get_error(c_->ssl, ret);
    ERR_clear_error();
    return kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE;
  }

  std::unique_ptr<Connection> c_;
};

class TlsScribe : public caf::io::scribe {
 public:
  TlsScribe(caf::io::network::default_multiplexer& mpx, native_socket fd, std::unique_ptr<Connection> c)
      : scribe(caf::io::network::conn_hdl_from_socket(fd)), conn_(c.get()), stream_(mpx, fd, std::move(c)) {
    // The broker's first bytes wait in the buffer until the handshake is
    // done; then they go (on the multiplexer's thread, inside a read).
    conn_->on_established = [this] {
      if (!stream_.wr_buf().empty()) stream_.flush(this);
    };
  }

  void configure_read(caf::io::receive_policy::config config) override {
    stream_.configure_read(config);
    if (!launched_) {
      launched_ = true;
      stream_.start(this);
    }
  }
  void ack_writes(bool enable) override { stream_.ack_writes(enable); }
  std::vector<char>& wr_buf() override { return stream_.wr_buf(); }
  std::vector<char>& rd_buf() override { return stream_.rd_buf(); }
  void graceful_shutdown() override {
    stream_.graceful_shutdown();
    detach(&stream_.backend(), false);
  }
  void flush() override {
    if (conn_->established) stream_.flush(this);
  }
  std::string addr() const override {
    auto x = caf::io::network::remote_addr_of_fd(stream_.fd());
    return x ? *x : "";
  }
  uint16_t port() const override {
    auto x = caf::io::network::remote_port_of_fd(stream_.fd());
    return x ? *x : 0;
  }
  void add_to_loop() override { stream_.activate(this); }
  void remove_from_loop() override { stream_.passivate(); }

 private:
  Connection* conn_;  // owned by stream_'s policy
  bool launched_ = false;
  caf::io::network::stream_impl<TlsPolicy> stream_;
};

std::string PeerOf(native_socket fd) {
  auto addr = caf::io::network::remote_addr_of_fd(fd);
  auto port = caf::io::network::remote_port_of_fd(fd);
  return (addr ? *addr : std::string("?")) + ":" + (port ? std::to_string(*port) : std::string("?"));
}

std::unique_ptr<Connection> NewConnection(const std::shared_ptr<Shared>& shared, native_socket fd, bool server,
                                          std::string peer) {
  SSL* ssl = shared->tls->NewSession(static_cast<int>(fd), server);
  if (ssl == nullptr) {
    spdlog::error("no TLS session for {}: OpenSSL could not make one", peer);
    return nullptr;
  }
  return std::make_unique<Connection>(shared, ssl, fd, server, std::move(peer));
}

class TlsDoorman : public caf::io::network::doorman_impl {
 public:
  TlsDoorman(caf::io::network::default_multiplexer& mpx, native_socket fd, std::shared_ptr<Shared> shared)
      : doorman_impl(mpx, fd), shared_(std::move(shared)) {}

  bool new_connection() override {
    if (detached()) return false;  // the broker let go while the poll still had this event
    auto& mpx = acceptor_.backend();
    const native_socket fd = acceptor_.accepted_socket();
    caf::io::network::nonblocking(fd, true);
    auto conn = NewConnection(shared_, fd, true, PeerOf(fd));
    if (!conn) {
      caf::io::network::close_socket(fd);
      return true;
    }
    auto scribe = caf::make_counted<TlsScribe>(mpx, fd, std::move(conn));
    auto hdl = scribe->hdl();
    parent()->add_scribe(std::move(scribe));
    return doorman::new_connection(&mpx, hdl);
  }

 private:
  std::shared_ptr<Shared> shared_;
};

class TlsMiddleman : public caf::io::middleman_actor_impl {
 public:
  TlsMiddleman(caf::actor_config& cfg, caf::actor broker, std::shared_ptr<Shared> shared)
      : middleman_actor_impl(cfg, std::move(broker)), shared_(std::move(shared)) {}

  const char* name() const override { return "actorrec::tls_middleman"; }

 protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host, uint16_t port) override {
    auto fd = caf::io::network::new_tcp_connection(host, port);
    if (!fd) return std::move(fd.error());
    caf::io::network::nonblocking(*fd, true);
    auto conn = NewConnection(shared_, *fd, false, host + ":" + std::to_string(port));
    // Sends the ClientHello; the multiplexer's reads drive the rest.
    if (!conn || !conn->Handshake()) {
      conn.reset();
      caf::io::network::close_socket(*fd);
      return caf::make_error(caf::sec::cannot_connect_to_node, "TLS handshake with " + host + ":" +
                                                                   std::to_string(port) + " failed");
    }
    return caf::make_counted<TlsScribe>(mpx(), *fd, std::move(conn));
  }

  caf::expected<caf::io::doorman_ptr> open(uint16_t port, const char* addr, bool reuse) override {
    auto fd = caf::io::network::new_tcp_acceptor_impl(port, addr, reuse);
    if (!fd) return std::move(fd.error());
    return caf::make_counted<TlsDoorman>(mpx(), *fd, shared_);
  }

 private:
  caf::io::network::default_multiplexer& mpx() {
    return static_cast<caf::io::network::default_multiplexer&>(system().middleman().backend());
  }
  std::shared_ptr<Shared> shared_;
};

}  // namespace

struct TlsTransport::Impl {
  caf::actor_system* sys = nullptr;
  std::shared_ptr<Shared> shared;
  caf::io::middleman_actor middleman;

  std::mutex timer_mu;
  std::condition_variable timer_cv;
  bool stopping = false;  // guarded by timer_mu
  std::thread timer;

  // Closes handshakes past their deadline: shutdown() wakes the multiplexer,
  // whose read then fails and closes the connection the usual way (the fd
  // stays open until the connection's stream is destroyed, which first takes
  // it out of `handshaking` under the same lock).
  void CloseStalled(Clock::time_point now) {
    std::vector<std::string> closed;
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      for (auto it = shared->handshaking.begin(); it != shared->handshaking.end();) {
        Connection* c = *it;
        if (c->deadline > now) {
          ++it;
          continue;
        }
        c->timed_out = true;
        ::shutdown(c->fd, SHUT_RDWR);
        closed.push_back((c->server ? "refused connection from " : "gave up on TLS with ") + c->peer +
                         ": no TLS handshake within " + std::to_string(shared->handshake_timeout.count()) + " ms");
        it = shared->handshaking.erase(it);
      }
    }
    for (const auto& line : closed) shared->Refused(line);
    shared->refusals.WarnHeldBack("refused connection(s)");
  }

  void RunTimer() {
    std::unique_lock<std::mutex> lock(timer_mu);
    while (!stopping) {
      timer_cv.wait_for(lock, kTimerTick);
      lock.unlock();
      CloseStalled(Clock::now());
      lock.lock();
    }
  }
};

TlsTransport::TlsTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<TlsTransport>> TlsTransport::Start(caf::actor_system& sys,
                                                          const config::ClusterConfig& cluster,
                                                          const std::string& member) {
  auto tls = ClusterTls::Create(cluster.secret, member);
  if (!tls.ok()) return tls.status();
  // OpenSSL writes its alerts with write(2), not send(MSG_NOSIGNAL): a peer
  // that has already gone (a port scanner, a closed stalled handshake) would
  // raise SIGPIPE and end the process. Ignored, the write fails with EPIPE,
  // which OpenSSL and CAF handle.
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->sys = &sys;
  impl->shared = std::make_shared<Shared>();
  impl->shared->tls = std::move(tls).value();
  impl->shared->max_message_bytes = kMaxMessageBytes;
  impl->shared->handshake_timeout = kHandshakeTimeout;
  auto broker = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  impl->middleman = sys.spawn<TlsMiddleman, caf::detached + caf::hidden>(broker, impl->shared);
  Impl* raw = impl.get();
  impl->timer = std::thread([raw] { raw->RunTimer(); });
  return std::unique_ptr<TlsTransport>(new TlsTransport(std::move(impl)));
}

TlsTransport::~TlsTransport() {
  {
    std::lock_guard<std::mutex> lock(impl_->timer_mu);
    impl_->stopping = true;
  }
  impl_->timer_cv.notify_all();
  impl_->timer.join();
  caf::anon_send_exit(impl_->middleman, caf::exit_reason::user_shutdown);
}

Result<uint16_t> TlsTransport::Publish(const caf::actor& whom, uint16_t port, const std::string& address) {
  auto f = caf::make_function_view(impl_->middleman);
  auto res = f(caf::publish_atom::value, port, caf::actor_cast<caf::strong_actor_ptr>(whom),
               impl_->sys->message_types(whom), address, true);
  if (!res) return Status::Unavailable(impl_->sys->render(res.error()));
  return *res;
}

void TlsTransport::Unpublish(const caf::actor& whom, uint16_t port) {
  caf::anon_send(impl_->middleman, caf::unpublish_atom::value, whom.address(), port);
}

Result<caf::actor> TlsTransport::RemoteActor(const std::string& host, uint16_t port) {
  auto f = caf::make_function_view(impl_->middleman);
  auto res = f(caf::connect_atom::value, host, port);
  if (!res) return Status::Unavailable(impl_->sys->render(res.error()));
  auto& ptr = std::get<1>(*res);
  if (!ptr) return Status::NotFound("no actor published at " + host + ":" + std::to_string(port));
  return caf::actor_cast<caf::actor>(std::move(ptr));
}

std::string TlsTransport::CertificateMismatch() const {
  std::lock_guard<std::mutex> lock(impl_->shared->mu);
  return impl_->shared->mismatch;
}

std::string TlsTransport::CaFingerprint() const { return impl_->shared->tls->CaFingerprint(); }

}  // namespace actorrec
