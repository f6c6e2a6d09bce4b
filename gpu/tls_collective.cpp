// The TLS collective: ring setup (listener thread, connect, hello), framed
// chunks with checked headers, and the chain schedule over them.
#include "gpu/tls_collective.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <gloo/rendezvous/store.h>

#include "base/cluster_tls.hpp"
#include "base/digest.hpp"
#include "base/log_rate_limit.hpp"
#include "gpu/chain_schedule.hpp"

namespace actorrec::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// A connection to the listener that has not said who it is this long after
// it was accepted is closed (and logged): a silent or slow client holds
// nothing. A member answers in one round trip; setup's own timeout is used
// when it is shorter.
constexpr auto kHelloTimeout = std::chrono::seconds(10);
// Connections the listener handshakes at once; more are closed at once (and
// logged), so that a flood cannot exhaust this process's descriptors.
constexpr size_t kMaxPending = 32;
// Refusal lines: at most this many per window, the rest counted.
constexpr uint32_t kRefusalBurst = 20;
constexpr auto kRefusalWindow = std::chrono::seconds(10);
constexpr const char* kRefusals = "refused collective connection(s)";

// The hello a connecting rank sends after the handshake, and the answer.
constexpr uint32_t kHelloMagic = 0x48435441;  // "ATCH"
constexpr uint32_t kAckMagic = 0x41435441;    // "ATCA"
constexpr uint32_t kVersion = 1;
constexpr size_t kHelloBytes = 24;  // magic, version, group (8), rank, size
constexpr size_t kAckBytes = 8;     // magic, code

enum class Refusal : uint32_t { kNone = 0, kGroup, kRank, kMember, kTaken, kMalformed };

std::string RefusalText(Refusal r) {
  switch (r) {
    case Refusal::kNone: return "accepted";
    case Refusal::kGroup: return "it belongs to another run or group (or to another group size)";
    case Refusal::kRank: return "the rank it claims is not this rank's ring predecessor";
    case Refusal::kMember: return "its certificate names another member than the one that hosts that rank";
    case Refusal::kTaken: return "this rank's predecessor is already connected";
    case Refusal::kMalformed: return "its hello is not one of this collective's";
  }
  return "unknown reason";
}

// The header of every chunk: magic, kind, phase, operation number, chunk,
// payload bytes (little-endian).
constexpr uint32_t kFrameMagic = 0x46435441;  // "ATCF"
constexpr size_t kHeaderBytes = 24;

enum class Kind : uint8_t { kAllReduce = 1, kBroadcast = 2, kBarrier = 3 };

const char* KindName(uint8_t k) {
  switch (static_cast<Kind>(k)) {
    case Kind::kAllReduce: return "all-reduce";
    case Kind::kBroadcast: return "broadcast";
    case Kind::kBarrier: return "barrier";
  }
  return "unknown operation";
}

void Put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void Put64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

struct Header {
  uint8_t kind = 0, phase = 0;
  uint64_t op = 0;
  uint32_t chunk = 0, bytes = 0;

  void Encode(char* p) const {
    Put32(p, kFrameMagic);
    p[4] = static_cast<char>(kind);
    p[5] = static_cast<char>(phase);
    p[6] = p[7] = 0;
    Put64(p + 8, op);
    Put32(p + 16, chunk);
    Put32(p + 20, bytes);
  }
  static bool Decode(const char* p, Header* h) {
    h->kind = static_cast<uint8_t>(p[4]);
    h->phase = static_cast<uint8_t>(p[5]);
    h->op = Get64(p + 8);
    h->chunk = Get32(p + 16);
    h->bytes = Get32(p + 20);
    return Get32(p) == kFrameMagic && p[6] == 0 && p[7] == 0;
  }
  std::string Describe() const {
    return std::string(KindName(kind)) + " op " + std::to_string(op) + (phase == 0 ? " reduce" : " broadcast") +
           " chunk " + std::to_string(chunk) + " of " + std::to_string(bytes) + " bytes";
  }
  bool operator==(const Header& o) const {
    return kind == o.kind && phase == o.phase && op == o.op && chunk == o.chunk && bytes == o.bytes;
  }
};

std::string Endpoint(const std::string& host, uint16_t port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string PeerAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return Endpoint(host, static_cast<uint16_t>(std::atoi(serv)));
}

void SetNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits until `fd` is ready for `events` or the deadline passes (false).
bool WaitFd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, INT_MAX)));
    if (r > 0) return true;  // an error or hang-up shows in the next call
    if (r < 0 && errno != EINTR) return true;
  }
}

// What the socket must become ready for before a non-blocking SSL call that
// returned `ret` can go on: POLLIN, POLLOUT, or 0 when it failed.
short WantEvents(SSL* ssl, int ret) {
  const int kind = SSL_get_error(ssl, ret);
  return kind == SSL_ERROR_WANT_READ ? POLLIN : kind == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
}

// What a failed SSL call that returned `ret` means, for a status.
std::string IoFailure(SSL* ssl, int ret) {
  const int kind = SSL_get_error(ssl, ret);
  const int err = errno;
  const unsigned long e = ERR_peek_error();
  std::string why;
  if (kind == SSL_ERROR_ZERO_RETURN || (kind == SSL_ERROR_SYSCALL && e == 0 && err == 0) ||
      (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
    why = "the connection was closed";
  } else if (kind == SSL_ERROR_SYSCALL && e == 0) {
    why = std::string("the connection failed: ") + std::strerror(err);
  } else {
    const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
    why = std::string("TLS error: ") + (reason != nullptr ? reason : "code " + std::to_string(kind));
  }
  ERR_clear_error();
  return why;
}

// Reads or writes exactly `len` bytes; "" when done, else why not. Each call
// waits at most until `deadline`.
std::string Transfer(SSL* ssl, int fd, bool write, char* buf, size_t len, Clock::time_point deadline,
                     std::chrono::milliseconds timeout) {
  while (len > 0) {
    ERR_clear_error();
    errno = 0;
    const int chunk = static_cast<int>(std::min<size_t>(len, INT_MAX));
    const int k = write ? SSL_write(ssl, buf, chunk) : SSL_read(ssl, buf, chunk);
    if (k > 0) {
      buf += k;
      len -= static_cast<size_t>(k);
      continue;
    }
    const short events = WantEvents(ssl, k);
    if (events == 0) return IoFailure(ssl, k);
    ERR_clear_error();
    if (!WaitFd(fd, events, deadline)) {
      return std::string("no ") + (write ? "progress sending" : "data") + " within " +
             std::to_string(timeout.count()) + " ms";
    }
  }
  return "";
}

// Runs the handshake to its end; "" when done, else why not.
std::string Handshake(SSL* ssl, int fd, Clock::time_point deadline, std::chrono::milliseconds timeout) {
  for (;;) {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl);
    if (r == 1) return "";
    const short events = WantEvents(ssl, r);
    if (events == 0) return ClusterTls::HandshakeFailure(ssl, r);
    if (!WaitFd(fd, events, deadline)) return "no TLS handshake within " + std::to_string(timeout.count()) + " ms";
  }
}

// One end of a ring link: a socket with its TLS session (non-blocking).
struct Conn {
  Conn(int f, SSL* s, uint32_t r, std::string w) : fd(f), ssl(s), rank(r), where(std::move(w)) {}
  ~Conn() {
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // "rank 2 at 127.0.0.1:4567" (the address it listens on, or where it
  // connected from).
  std::string Name() const { return "rank " + std::to_string(rank) + " " + where; }

  int fd;
  SSL* ssl;
  uint32_t rank;
  std::string where;
};

// A listening socket on `address`, any port: the fd and its port.
Result<std::pair<int, uint16_t>> Listen(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int e = ::getaddrinfo(address.c_str(), "0", &hints, &found); e != 0) {
    return Status::InvalidArgument("cannot resolve '" + address + "': " + ::gai_strerror(e));
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
      const uint16_t port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                           : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
      ::freeaddrinfo(found);
      return std::make_pair(fd, port);
    }
    last = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return Status::Unavailable("cannot listen on '" + address + "': " + last);
}

// A connected non-blocking socket to host:port, retrying a refused connect
// until the deadline; -1 and *why otherwise.
int ConnectSocket(const std::string& host, uint16_t port, Clock::time_point deadline, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int e = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0) {
    *why = std::string("cannot resolve its address: ") + ::gai_strerror(e);
    return -1;
  }
  for (;;) {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (r != 0 && errno == EINPROGRESS && WaitFd(fd, POLLOUT, deadline)) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        errno = err;
        r = err == 0 ? 0 : -1;
      } else if (r != 0 && errno == EINPROGRESS) {
        errno = ETIMEDOUT;
      }
      if (r == 0) {
        ::freeaddrinfo(found);
        SetNoDelay(fd);
        return fd;
      }
      *why = std::string("cannot connect: ") + std::strerror(errno);
      ::close(fd);
    }
    if (Clock::now() + std::chrono::milliseconds(20) >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::freeaddrinfo(found);
  return -1;
}

// The listener of one rank: a thread that accepts, handshakes and checks
// every connection, hands the first good one from the ring predecessor to
// the collective, and refuses (and logs) the rest for as long as the
// collective lives.
class Listener {
 public:
  struct Expect {
    uint32_t rank, size, prev;
    uint64_t group;
    std::string prev_member;  // empty: any member
  };

  Listener(int fd, uint16_t port, std::shared_ptr<ClusterTls> tls, Expect expect, std::chrono::milliseconds timeout)
      : fd_(fd),
        port_(port),
        tls_(std::move(tls)),
        expect_(std::move(expect)),
        hello_timeout_(std::min<std::chrono::milliseconds>(timeout, kHelloTimeout)),
        wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Listener() {
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
    thread_.join();
    ::close(wake_);
    ::close(fd_);
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  uint16_t port() const { return port_; }

  // The predecessor's connection once it has arrived, else null at the
  // deadline; *last_refusal says why the last refused connection was.
  std::unique_ptr<Conn> WaitPredecessor(Clock::time_point deadline, std::string* last_refusal) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, deadline, [&] { return handed_ != nullptr; });
    *last_refusal = last_refusal_;
    return std::move(handed_);
  }

 private:
  enum class Stage { kHandshake, kHello, kAck };
  struct Pending {
    Pending(int f, SSL* s, std::string p, Clock::time_point d) : fd(f), ssl(s), peer(std::move(p)), deadline(d) {}
    ~Pending() {
      if (ssl != nullptr) SSL_free(ssl);
      if (fd >= 0) ::close(fd);
    }
    int fd;
    SSL* ssl;
    std::string peer;
    Clock::time_point deadline;
    Stage stage = Stage::kHandshake;
    short events = POLLIN;
    char hello[kHelloBytes] = {};
    size_t got = 0;
    char ack[kAckBytes] = {};
    size_t sent = 0;
    Refusal refusal = Refusal::kNone;
    std::string member;
    uint32_t rank = 0;
  };

  void Refuse(const std::string& peer, const std::string& why) {
    const std::string line = "rank " + std::to_string(expect_.rank) + "'s collective listener (port " +
                             std::to_string(port_) + ") refused a connection from " + peer + ": " + why;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_refusal_ = "from " + peer + ": " + why;
    }
    refusals_.Warn(line, kRefusals);
  }

  Refusal Check(Pending& p) {
    if (Get32(p.hello) != kHelloMagic || Get32(p.hello + 4) != kVersion) return Refusal::kMalformed;
    p.rank = Get32(p.hello + 16);
    if (Get64(p.hello + 8) != expect_.group || Get32(p.hello + 20) != expect_.size) return Refusal::kGroup;
    if (p.rank != expect_.prev) return Refusal::kRank;
    if (!expect_.prev_member.empty() && p.member != expect_.prev_member) return Refusal::kMember;
    std::lock_guard<std::mutex> lock(mu_);
    if (taken_) return Refusal::kTaken;
    return Refusal::kNone;
  }

  // Moves `p` on as far as its socket allows; true once it is finished
  // (handed over or refused: to be dropped).
  bool Advance(Pending& p) {
    for (;;) {
      ERR_clear_error();
      errno = 0;
      int r = 0;
      if (p.stage == Stage::kHandshake) {
        r = SSL_do_handshake(p.ssl);
        if (r == 1) {
          p.member = ClusterTls::PeerMember(p.ssl);
          p.stage = Stage::kHello;
          continue;
        }
      } else if (p.stage == Stage::kHello) {
        r = SSL_read(p.ssl, p.hello + p.got, static_cast<int>(kHelloBytes - p.got));
        if (r > 0) {
          p.got += static_cast<size_t>(r);
          if (p.got == kHelloBytes) {
            p.refusal = Check(p);
            std::memcpy(p.ack, detail::TlsAck(static_cast<uint32_t>(p.refusal)).data(), kAckBytes);
            p.stage = Stage::kAck;
          }
          continue;
        }
      } else {
        r = SSL_write(p.ssl, p.ack + p.sent, static_cast<int>(kAckBytes - p.sent));
        if (r > 0) {
          p.sent += static_cast<size_t>(r);
          if (p.sent < kAckBytes) continue;
          if (p.refusal != Refusal::kNone) {
            Refuse(p.peer + " (member '" + p.member + "', claiming rank " + std::to_string(p.rank) + ")",
                   RefusalText(p.refusal));
            return true;
          }
          bool taken = false;
          {
            // Two good hellos may both have passed Check before either
            // got here: the first one in is the predecessor.
            std::lock_guard<std::mutex> lock(mu_);
            taken = taken_;
            if (!taken) {
              taken_ = true;
              handed_ = std::make_unique<Conn>(p.fd, p.ssl, p.rank, "(connected from " + p.peer + ")");
              p.fd = -1;
              p.ssl = nullptr;
              cv_.notify_all();
            }
          }
          if (taken) Refuse(p.peer, RefusalText(Refusal::kTaken));
          return true;
        }
      }
      if (const short events = WantEvents(p.ssl, r); events != 0) {
        p.events = events;
        ERR_clear_error();
        return false;
      }
      if (p.stage == Stage::kHandshake) {
        Refuse(p.peer, ClusterTls::HandshakeFailure(p.ssl, r));
      } else {
        Refuse(p.peer + " (member '" + p.member + "')",
               std::string(p.stage == Stage::kHello ? "before its hello: " : "before the answer: ") +
                   IoFailure(p.ssl, r));
      }
      return true;
    }
  }

  void Accept(std::list<Pending>& pending) {
    for (;;) {
      const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or an error the next poll shows again
      const std::string peer = PeerAddress(fd);
      if (pending.size() >= kMaxPending) {
        ::close(fd);
        Refuse(peer, std::to_string(kMaxPending) + " connections are already handshaking");
        continue;
      }
      SSL* ssl = tls_->NewSession(fd, true);
      if (ssl == nullptr) {
        ::close(fd);
        Refuse(peer, "OpenSSL could not make a session");
        continue;
      }
      SetNoDelay(fd);
      pending.emplace_back(fd, ssl, peer, Clock::now() + hello_timeout_);
      if (Advance(pending.back())) pending.pop_back();
    }
  }

  void Loop() {
    std::list<Pending> pending;
    for (;;) {
      std::vector<pollfd> fds{{wake_, POLLIN, 0}, {fd_, POLLIN, 0}};
      auto wait = std::chrono::milliseconds(1000);
      const auto now = Clock::now();
      for (auto& p : pending) {
        fds.push_back({p.fd, p.events, 0});
        wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now) +
                                  std::chrono::milliseconds(1));
      }
      const int r = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait.count(), 0)));
      if (r < 0 && errno != EINTR) {
        spdlog::error("rank {}'s collective listener: poll failed: {}", expect_.rank, std::strerror(errno));
        return;
      }
      if (fds[0].revents != 0) return;
      size_t i = 2;
      for (auto it = pending.begin(); it != pending.end(); ++i) {
        const bool ready = fds[i].revents != 0;
        if (ready && Advance(*it)) {
          it = pending.erase(it);
        } else if (Clock::now() >= it->deadline) {
          Refuse(it->peer, "no TLS handshake and hello within " + std::to_string(hello_timeout_.count()) + " ms");
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
      if (fds[1].revents != 0) Accept(pending);
      refusals_.WarnHeldBack(kRefusals);
    }
  }

  const int fd_;
  const uint16_t port_;
  const std::shared_ptr<ClusterTls> tls_;
  const Expect expect_;
  const std::chrono::milliseconds hello_timeout_;
  const int wake_;
  LogRateLimit refusals_{kRefusalBurst, kRefusalWindow};
  std::mutex mu_;
  std::condition_variable cv_;
  bool taken_ = false;               // guarded by mu_
  std::unique_ptr<Conn> handed_;     // guarded by mu_
  std::string last_refusal_;         // guarded by mu_
  std::thread thread_;
};

// A failure of one link, with the peer named; the collective turns it into
// its broken status.
struct LinkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TlsCollective final : public Collective {
 public:
  TlsCollective(uint32_t rank, uint32_t size, std::chrono::milliseconds timeout, size_t chunk,
                std::unique_ptr<Listener> listener, std::unique_ptr<Conn> next, std::unique_ptr<Conn> prev)
      : rank_(rank),
        size_(size),
        timeout_(timeout),
        chunk_(chunk),
        listener_(std::move(listener)),
        next_(std::move(next)),
        prev_(std::move(prev)) {}

  ~TlsCollective() override {
    listener_.reset();  // its thread first: it refuses while the links close
  }

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }

  Status AllReduceRankOrder(float* data, size_t n) override {
    return Run(Kind::kAllReduce, [&](chain::Link& link) {
      chain::AllReduceRankOrder(link, rank_, size_, data, n, chunk_, scratch_);
    });
  }

  Status Broadcast(float* data, size_t n, uint32_t root) override {
    if (root >= size_) {
      return Status::InvalidArgument("broadcast root " + std::to_string(root) + " >= group size " +
                                     std::to_string(size_));
    }
    return Run(Kind::kBroadcast, [&](chain::Link& link) { chain::Broadcast(link, rank_, size_, root, data, n, chunk_); });
  }

  Status Barrier() override {
    // Every rank's exit waits for the broadcast that follows rank W−1's
    // receipt of everyone's (empty) contribution.
    float token = 0.0f;
    return Run(Kind::kBarrier, [&](chain::Link& link) {
      chain::AllReduceRankOrder(link, rank_, size_, &token, 1, chunk_, scratch_);
    });
  }

 private:
  class Link final : public chain::Link {
   public:
    Link(TlsCollective& c, Kind kind, uint64_t op) : c_(c), kind_(kind), op_(op) {}

    void Begin(chain::Phase phase, float* recv_base, size_t recv_floats, const float* send_base,
               size_t send_floats) override {
      phase_ = phase;
      recv_base_ = recv_base;
      recv_floats_ = recv_floats;
      send_base_ = send_base;
      send_floats_ = send_floats;
      expected_.clear();
    }
    void Expect(size_t chunk, size_t offset, size_t count) override {
      if (recv_base_ == nullptr || offset + count > recv_floats_) throw LinkError("a chunk outside its buffer");
      expected_.push_back({chunk, offset, count});
    }
    void Receive(size_t chunk) override {
      if (expected_.empty() || expected_.front().chunk != chunk) throw LinkError("a chunk received out of order");
      const Expected e = expected_.front();
      expected_.pop_front();
      Conn& prev = *c_.prev_;
      char raw[kHeaderBytes];
      Io(prev, false, raw, sizeof raw, "receiving from");
      Header got, want = HeaderOf(chunk, e.count);
      const bool framed = Header::Decode(raw, &got);
      if (!framed || !(got == want)) {
        throw LinkError("receiving from " + prev.Name() + ": " +
                        (framed ? "a frame of " + got.Describe() : std::string("bytes that are not a frame header")) +
                        " where " + want.Describe() + " was expected");
      }
      Io(prev, false, reinterpret_cast<char*>(recv_base_ + e.offset), e.count * sizeof(float), "receiving from");
    }
    void Send(size_t chunk, size_t offset, size_t count) override {
      if (offset + count > send_floats_) throw LinkError("a chunk outside its buffer");
      Conn& next = *c_.next_;
      char raw[kHeaderBytes];
      HeaderOf(chunk, count).Encode(raw);
      Io(next, true, raw, sizeof raw, "sending to");
      // SSL_write only reads the buffer.
      Io(next, true, const_cast<char*>(reinterpret_cast<const char*>(send_base_ + offset)), count * sizeof(float),
         "sending to");
    }
    void Flush() override {}

   private:
    struct Expected {
      size_t chunk, offset, count;
    };
    Header HeaderOf(size_t chunk, size_t count) const {
      Header h;
      h.kind = static_cast<uint8_t>(kind_);
      h.phase = static_cast<uint8_t>(phase_);
      h.op = op_;
      h.chunk = static_cast<uint32_t>(chunk);
      h.bytes = static_cast<uint32_t>(count * sizeof(float));
      return h;
    }
    void Io(Conn& conn, bool write, char* buf, size_t len, const char* what) {
      const std::string why = Transfer(conn.ssl, conn.fd, write, buf, len, Clock::now() + c_.timeout_, c_.timeout_);
      if (!why.empty()) throw LinkError(std::string(what) + " " + conn.Name() + ": " + why);
    }

    TlsCollective& c_;
    const Kind kind_;
    const uint64_t op_;
    chain::Phase phase_ = chain::Phase::kReduce;
    float* recv_base_ = nullptr;
    size_t recv_floats_ = 0;
    const float* send_base_ = nullptr;
    size_t send_floats_ = 0;
    std::deque<Expected> expected_;
  };

  template <class F>
  Status Run(Kind kind, F&& body) {
    if (!broken_.ok()) return broken_;
    const uint64_t op = next_op_++;
    try {
      Link link(*this, kind, op);
      body(link);
      return Status::Ok();
    } catch (const LinkError& e) {
      broken_ = Status::Unavailable("tls collective " + std::string(KindName(static_cast<uint8_t>(kind))) +
                                    " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                                    " failed (op " + std::to_string(op) + "): " + e.what());
    }
    // The neighbours' state is unknown: close both links so that they fail
    // now rather than at their timeout, and nothing more lands in a buffer.
    ::shutdown(next_->fd, SHUT_RDWR);
    ::shutdown(prev_->fd, SHUT_RDWR);
    return broken_;
  }

  const uint32_t rank_, size_;
  const std::chrono::milliseconds timeout_;
  const size_t chunk_;
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<Conn> next_, prev_;
  uint64_t next_op_ = 0;
  std::vector<float> scratch_;
  Status broken_;
};

// host:port (host may be [v6]) from the store's value.
bool ParseEndpoint(const std::string& s, std::string* host, uint16_t* port) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  *host = s.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  const std::string digits = s.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const int p = std::stoi(digits);
  if (p <= 0 || p > 65535) return false;
  *port = static_cast<uint16_t>(p);
  return true;
}

}  // namespace

namespace detail {

std::string TlsStoreKey(const std::string& prefix, uint32_t rank) {
  return prefix + "-tls-rank-" + std::to_string(rank);
}

std::string TlsHello(const std::string& prefix, uint32_t rank, uint32_t size) {
  std::string s(kHelloBytes, '\0');
  Put32(s.data(), kHelloMagic);
  Put32(s.data() + 4, kVersion);
  Put64(s.data() + 8, Digest64(prefix));
  Put32(s.data() + 16, rank);
  Put32(s.data() + 20, size);
  return s;
}

std::string TlsAck(uint32_t code) {
  std::string s(kAckBytes, '\0');
  Put32(s.data(), kAckMagic);
  Put32(s.data() + 4, code);
  return s;
}

std::string TlsFrameHeader(uint8_t kind, uint8_t phase, uint64_t op, uint32_t chunk, uint32_t bytes) {
  std::string s(kHeaderBytes, '\0');
  Header{kind, phase, op, chunk, bytes}.Encode(s.data());
  return s;
}

}  // namespace detail

Result<std::unique_ptr<Collective>> ConnectTls(const TlsCollectiveOptions& o) {
  if (o.size == 0 || o.rank >= o.size) {
    return Status::InvalidArgument("tls collective: rank " + std::to_string(o.rank) + " is not in a group of size " +
                                   std::to_string(o.size));
  }
  if (o.chunk_floats == 0 || o.chunk_floats > (uint32_t{1} << 28)) {
    return Status::InvalidArgument("tls collective: chunk_floats must be in 1..2^28");
  }
  if (o.timeout.count() <= 0) return Status::InvalidArgument("tls collective: timeout must be positive");
  if (o.size == 1) return MakeSoloCollective();
  if (!o.tls) return Status::InvalidArgument("tls collective: no cluster keys");
  if (!o.store) return Status::InvalidArgument("tls collective: no rendezvous store");
  if (o.prefix.empty()) return Status::InvalidArgument("tls collective: empty store prefix (it must be unique per run)");
  if (!o.members.empty() && o.members.size() != o.size) {
    return Status::InvalidArgument("tls collective: " + std::to_string(o.members.size()) + " member names for " +
                                   std::to_string(o.size) + " ranks");
  }
  std::signal(SIGPIPE, SIG_IGN);  // see the header

  const uint32_t next_rank = (o.rank + 1) % o.size, prev_rank = (o.rank + o.size - 1) % o.size;
  const std::string who = "tls collective connect on rank " + std::to_string(o.rank) + " of " + std::to_string(o.size);
  const auto deadline = Clock::now() + o.timeout;
  auto listening = Listen(o.address);
  if (!listening.ok()) return Status::Unavailable(who + ": " + listening.status().message());
  Listener::Expect expect{o.rank, o.size, prev_rank, Digest64(o.prefix),
                          o.members.empty() ? std::string() : o.members[prev_rank]};
  auto listener =
      std::make_unique<Listener>(listening->first, listening->second, o.tls, std::move(expect), o.timeout);

  // Publish where this rank listens; learn where the next one does.
  const std::string mine = Endpoint(o.address, listener->port());
  const std::string next_key = detail::TlsStoreKey(o.prefix, next_rank);
  std::string next_endpoint;
  try {
    o.store->set(detail::TlsStoreKey(o.prefix, o.rank), std::vector<char>(mine.begin(), mine.end()));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    o.store->wait({next_key}, std::max(left, std::chrono::milliseconds(1)));
    const std::vector<char> value = o.store->get(next_key);
    next_endpoint.assign(value.begin(), value.end());
  } catch (const std::exception& e) {
    return Status::Unavailable(who + ": rank " + std::to_string(next_rank) +
                               " did not publish its address (key '" + next_key + "'): " + e.what());
  }
  std::string host;
  uint16_t port = 0;
  if (!ParseEndpoint(next_endpoint, &host, &port)) {
    return Status::Unavailable(who + ": rank " + std::to_string(next_rank) + " published '" + next_endpoint +
                               "' (key '" + next_key + "'), not an address:port");
  }
  const std::string next_name = "rank " + std::to_string(next_rank) + " at " + next_endpoint;

  // Connect to the next rank: TLS, its certificate, the hello and its answer.
  std::string why;
  const int fd = ConnectSocket(host, port, deadline, &why);
  if (fd < 0) return Status::Unavailable(who + ": " + next_name + ": " + why);
  SSL* ssl = o.tls->NewSession(fd, false);
  if (ssl == nullptr) {
    ::close(fd);
    return Status::Unavailable(who + ": " + next_name + ": OpenSSL could not make a session");
  }
  auto next = std::make_unique<Conn>(fd, ssl, next_rank, "at " + next_endpoint);
  why = Handshake(ssl, fd, deadline, o.timeout);
  if (!why.empty()) return Status::Unavailable(who + ": " + next_name + ": " + why);
  const std::string member = ClusterTls::PeerMember(ssl);
  if (!o.members.empty() && member != o.members[next_rank]) {
    return Status::Unavailable(who + ": " + next_name + " presented a certificate of member '" + member +
                               "', but member '" + o.members[next_rank] + "' hosts that rank");
  }
  std::string hello = detail::TlsHello(o.prefix, o.rank, o.size);
  char ack[kAckBytes];
  why = Transfer(ssl, fd, true, hello.data(), hello.size(), deadline, o.timeout);
  if (why.empty()) why = Transfer(ssl, fd, false, ack, sizeof ack, deadline, o.timeout);
  if (!why.empty()) return Status::Unavailable(who + ": " + next_name + " did not answer the hello: " + why);
  if (Get32(ack) != kAckMagic) return Status::Unavailable(who + ": " + next_name + " answered the hello with garbage");
  if (const auto code = static_cast<Refusal>(Get32(ack + 4)); code != Refusal::kNone) {
    return Status::Unavailable(who + ": " + next_name + " refused this rank: " + RefusalText(code));
  }

  // The previous rank connects to this one.
  std::string last_refusal;
  auto prev = listener->WaitPredecessor(deadline, &last_refusal);
  if (!prev) {
    return Status::Unavailable(who + ": rank " + std::to_string(prev_rank) + " did not connect to " + mine +
                               " within " + std::to_string(o.timeout.count()) + " ms" +
                               (last_refusal.empty() ? "" : "; last refused connection " + last_refusal));
  }
  spdlog::info("tls collective: rank {} of {} listens on {}, connected to {}, and from rank {} {}", o.rank, o.size,
               mine, next_name, prev_rank, prev->where);
  return std::unique_ptr<Collective>(std::make_unique<TlsCollective>(o.rank, o.size, o.timeout, o.chunk_floats,
                                                                     std::move(listener), std::move(next),
                                                                     std::move(prev)));
}

}  // namespace actorrec::gpu
