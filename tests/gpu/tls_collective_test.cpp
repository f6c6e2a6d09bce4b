// The TLS collective with ranks as threads of this process over real TLS
// sockets on 127.0.0.1: the rank-order all-reduce bitwise against a
// sequential loop, broadcast, barrier; peers with another secret or another
// member's certificate refused at setup; hostile connections during a run
// refused, logged and harmless; a dead, a silent and a forging peer each
// breaking the collective with a status that names it.
//
// Catch2's assertions are not thread-safe: rank threads only record what they
// saw, and the test thread checks it after joining them.
#include "gpu/tls_collective.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "base/cluster_tls.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {
namespace {

using testing::Inputs;
using testing::RunRanks;
using testing::SameBits;
using testing::UniquePrefix;

const std::string kSecret = "a-test-secret-of-enough-length";
const std::string kOtherSecret = "another-secret-of-enough-length";

// Keys per (secret, member), made once: scrypt takes 50 ms each.
std::shared_ptr<ClusterTls> Keys(const std::string& member, const std::string& secret = kSecret) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<ClusterTls>> made;
  std::lock_guard<std::mutex> lock(mu);
  auto& keys = made[{secret, member}];
  if (!keys) {
    auto created = ClusterTls::Create(secret, member);
    REQUIRE(created.ok());
    keys = std::move(created).value();
  }
  return keys;
}

std::string MemberOf(uint32_t rank) { return "member-" + std::to_string(rank); }

struct Group {
  uint32_t w = 2;
  size_t chunk = 5;
  std::chrono::milliseconds timeout{10000};
  std::shared_ptr<gloo::rendezvous::Store> store = MakeInProcessStore();
  std::string prefix = UniquePrefix();
  bool check_members = true;
  // The keys rank r uses (default: its member's, under kSecret).
  std::function<std::shared_ptr<ClusterTls>(uint32_t)> keys = [](uint32_t r) { return Keys(MemberOf(r)); };

  TlsCollectiveOptions Options(uint32_t r) const {
    TlsCollectiveOptions o;
    o.rank = r;
    o.size = w;
    o.timeout = timeout;
    o.tls = keys(r);
    o.store = store;
    o.prefix = prefix;
    o.chunk_floats = chunk;
    if (check_members) {
      for (uint32_t k = 0; k < w; ++k) o.members.push_back(MemberOf(k));
    }
    return o;
  }
  std::vector<Status> Run(const std::function<void(uint32_t, Collective&)>& body) const {
    return RunRanks(w, [&](uint32_t r) { return ConnectTls(Options(r)); }, body);
  }
};

std::vector<float> RankOrderSum(uint64_t seed, uint32_t w, size_t n) {
  std::vector<float> want = Inputs(seed, 0, n);
  for (uint32_t r = 1; r < w; ++r) {
    const std::vector<float> x = Inputs(seed, r, n);
    for (size_t i = 0; i < n; ++i) want[i] = want[i] + x[i];
  }
  return want;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The log lines written while it lives.
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)), previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("tls-collective-test", sink_));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string Text() const {
    std::string all;
    for (const auto& line : sink_->last_formatted()) all += line;
    return all;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

// Blocking TCP to 127.0.0.1:port; -1 when refused.
int Dial(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

uint16_t PortOf(gloo::rendezvous::Store& store, const std::string& prefix, uint32_t rank) {
  const std::string key = detail::TlsStoreKey(prefix, rank);
  store.wait({key}, std::chrono::seconds(10));
  const std::vector<char> v = store.get(key);
  const std::string s(v.begin(), v.end());
  return static_cast<uint16_t>(std::stoi(s.substr(s.rfind(':') + 1)));
}

// A blocking TLS session over `fd` with `keys`; handshake done or failed.
struct Session {
  Session(int f, const std::shared_ptr<ClusterTls>& keys, bool server) : fd(f), ssl(keys->NewSession(f, server)) {
    ERR_clear_error();
    ok = SSL_do_handshake(ssl) == 1;
    ERR_clear_error();
  }
  ~Session() {
    SSL_free(ssl);
    ::close(fd);
  }
  bool Write(const std::string& bytes) { return SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size())) > 0; }
  std::string Read(size_t n) {
    std::string s(n, '\0');
    size_t got = 0;
    while (got < n) {
      const int k = SSL_read(ssl, s.data() + got, static_cast<int>(n - got));
      if (k <= 0) break;
      got += static_cast<size_t>(k);
    }
    s.resize(got);
    return s;
  }
  int fd;
  SSL* ssl;
  bool ok = false;
};

}  // namespace

TEST_CASE("the TLS collective's AllReduceRankOrder equals the sequential rank-order sum bitwise on every rank",
          "[gpu][tls_collective]") {
  const uint32_t w = GENERATE(2u, 3u, 4u);
  const uint64_t seed = GENERATE(1u, 2u);
  Group g;
  g.w = w;
  // 0, 1, odd sizes around the chunk, several chunks (more than the receive
  // window), and random sizes up to 60 chunks.
  std::vector<size_t> sizes{0, 1, 3, 4, 5, 6, 21, 4 * 5 + 1, 9 * 5 + 2};
  data::gen::Rng size_rng(seed * 7 + w);
  while (sizes.size() < 30) sizes.push_back(size_rng.Below(300));
  const int calls = static_cast<int>(sizes.size());
  std::vector<std::vector<std::vector<float>>> results(w, std::vector<std::vector<float>>(calls));
  std::vector<std::vector<Status>> statuses(w, std::vector<Status>(calls));
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    for (int call = 0; call < calls; ++call) {
      std::vector<float> x = Inputs(seed * 100 + call, r, sizes[call]);
      statuses[r][call] = c.AllReduceRankOrder(x.data(), x.size());
      results[r][call] = std::move(x);
    }
  });
  size_t order_sensitive = 0;  // elements whose sum another order would change
  for (int call = 0; call < calls; ++call) {
    const size_t n = sizes[call];
    const std::vector<float> want = RankOrderSum(seed * 100 + call, w, n);
    if (w > 2) {
      for (size_t i = 0; i < n; ++i) {
        float ring = Inputs(seed * 100 + call, 1, n)[i];
        for (uint32_t k = 2; k < w + 1; ++k) ring = ring + Inputs(seed * 100 + call, k % w, n)[i];
        order_sensitive += std::memcmp(&ring, &want[i], sizeof(float)) != 0;
      }
    }
    for (uint32_t r = 0; r < w; ++r) {
      INFO("W " << w << " seed " << seed << " rank " << r << " call " << call << " n " << n);
      REQUIRE(connected[r].ok());
      REQUIRE(statuses[r][call].ok());
      CHECK(SameBits(results[r][call], want));
    }
  }
  if (w > 2) CHECK(order_sensitive > 0);
}

TEST_CASE("the TLS collective pipelines inputs of many default-size chunks", "[gpu][tls_collective]") {
  Group g;
  g.w = 3;
  g.chunk = kDefaultChunkFloats;
  const size_t n = 5 * kDefaultChunkFloats + 123;
  std::vector<std::vector<float>> results(g.w);
  std::vector<Status> statuses(g.w);
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    results[r] = Inputs(77, r, n);
    statuses[r] = c.AllReduceRankOrder(results[r].data(), n);
  });
  const std::vector<float> want = RankOrderSum(77, g.w, n);
  for (uint32_t r = 0; r < g.w; ++r) {
    REQUIRE(connected[r].ok());
    REQUIRE(statuses[r].ok());
    CHECK(SameBits(results[r], want));
  }
}

TEST_CASE("the TLS collective's Broadcast gives every rank the root's data and Barrier waits for all",
          "[gpu][tls_collective]") {
  const uint32_t w = GENERATE(2u, 3u, 4u);
  Group g;
  g.w = w;
  const std::vector<size_t> sizes{0, 1, 17, 1000};
  std::vector<std::vector<std::vector<std::vector<float>>>> results(w);  // [rank][root][size]
  std::vector<std::vector<Status>> statuses(w);
  std::atomic<int> entered{0};
  std::vector<std::vector<int>> seen(w);  // how many had entered when each rank left barrier k
  const int rounds = 10;
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    results[r].resize(w);
    for (uint32_t root = 0; root < w; ++root) {
      for (size_t n : sizes) {
        std::vector<float> x = Inputs(root * 10 + n, r, n);
        statuses[r].push_back(c.Broadcast(x.data(), n, root));
        results[r][root].push_back(std::move(x));
      }
    }
    statuses[r].push_back(c.Broadcast(nullptr, 0, w));  // a root outside the group
    for (int k = 0; k < rounds; ++k) {
      entered.fetch_add(1);
      statuses[r].push_back(c.Barrier());
      seen[r].push_back(entered.load());
      statuses[r].push_back(c.Barrier());  // nobody enters round k+1 before all left round k
    }
  });
  for (uint32_t r = 0; r < w; ++r) {
    REQUIRE(connected[r].ok());
    const size_t broadcasts = w * sizes.size();
    REQUIRE(statuses[r].size() == broadcasts + 1 + 2 * rounds);
    for (size_t k = 0; k < statuses[r].size(); ++k) {
      CHECK(statuses[r][k].code() == (k == broadcasts ? Status::Code::kInvalidArgument : Status::Code::kOk));
    }
    for (uint32_t root = 0; root < w; ++root)
      for (size_t s = 0; s < sizes.size(); ++s) CHECK(SameBits(results[r][root][s], Inputs(root * 10 + sizes[s], root, sizes[s])));
    for (int k = 0; k < rounds; ++k) CHECK(seen[r][k] >= static_cast<int>(w) * (k + 1));
  }
}

TEST_CASE("a rank with another cluster secret is refused at setup, and the status names the peer",
          "[gpu][tls_collective]") {
  Group g;
  g.keys = [](uint32_t r) { return r == 1 ? Keys(MemberOf(1), kOtherSecret) : Keys(MemberOf(r)); };
  g.timeout = std::chrono::milliseconds(20000);
  auto connected = g.Run([](uint32_t, Collective&) {});
  int said_secret = 0;
  for (uint32_t r = 0; r < 2; ++r) {
    INFO(connected[r].message());
    CHECK(connected[r].code() == Status::Code::kUnavailable);
    CHECK(Contains(connected[r].message(), "rank " + std::to_string(1 - r) + " at 127.0.0.1:"));
    // Not the 20 s timeout: the handshake failed.
    CHECK_FALSE(Contains(connected[r].message(), "within"));
    said_secret += Contains(connected[r].message(), "secret");
  }
  // The first rank to see the other's certificate says why; the other may
  // only see its connection closed, as that rank gave up.
  CHECK(said_secret >= 1);
}

TEST_CASE("a rank whose certificate names another member than the one hosting it is refused",
          "[gpu][tls_collective]") {
  Group g;
  g.w = 3;
  g.keys = [](uint32_t r) { return Keys(r == 1 ? "member-9" : MemberOf(r)); };
  g.timeout = std::chrono::milliseconds(3000);
  auto connected = g.Run([](uint32_t, Collective&) {});
  INFO(connected[0].message());
  CHECK(connected[0].code() == Status::Code::kUnavailable);
  CHECK(Contains(connected[0].message(), "rank 1 at 127.0.0.1:"));
  CHECK(Contains(connected[0].message(), "certificate of member 'member-9', but member 'member-1' hosts that rank"));
  // Rank 1 connects to rank 2, which refuses it for the same reason (and
  // logs that); rank 1 may see only the connection closing.
  INFO(connected[1].message());
  CHECK(connected[1].code() == Status::Code::kUnavailable);
  CHECK(Contains(connected[1].message(), "rank 2 at 127.0.0.1:"));
}

TEST_CASE("hostile connections to a rank's port during a run are refused, logged, and change no result",
          "[gpu][tls_collective]") {
  LogCapture log;
  Group g;
  g.w = 3;
  g.chunk = 64;
  const int calls = 40;
  const size_t n = 1000;
  std::atomic<int> hostile_rounds{0};
  std::atomic<bool> done{false};
  std::vector<std::vector<std::vector<float>>> results(g.w, std::vector<std::vector<float>>(calls));
  std::vector<std::vector<Status>> statuses(g.w, std::vector<Status>(calls));

  std::thread hostile([&] {
    const uint16_t port = PortOf(*g.store, g.prefix, 1);
    std::mt19937 rng(5);
    const auto intruder = Keys("intruder", kOtherSecret);
    const auto member = Keys(MemberOf(0));  // a member's keys, connecting late in place of rank 0
    while (!done.load()) {
      if (int fd = Dial(port); fd >= 0) {  // random bytes
        std::string junk(64, '\0');
        for (char& c : junk) c = static_cast<char>(rng());
        (void)!::write(fd, junk.data(), junk.size());
        ::close(fd);
      }
      if (int fd = Dial(port); fd >= 0) Session s(fd, intruder, false);  // another secret
      if (int fd = Dial(port); fd >= 0) {  // no hello, a forged frame header instead
        Session s(fd, member, false);
        if (s.ok) s.Write(detail::TlsFrameHeader(1, 1, 0, 0, 4000));
        s.Read(8);
      }
      if (int fd = Dial(port); fd >= 0) {  // the right hello, too late
        Session s(fd, member, false);
        if (s.ok) s.Write(detail::TlsHello(g.prefix, 0, g.w));
        s.Read(8);
      }
      hostile_rounds.fetch_add(1);
    }
  });
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    for (int call = 0; call < calls; ++call) {
      // Every rank waits here for the same condition, so all make the same calls.
      if (call == calls / 2) {
        while (hostile_rounds.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::vector<float> x = Inputs(500 + call, r, n);
      statuses[r][call] = c.AllReduceRankOrder(x.data(), n);
      results[r][call] = std::move(x);
    }
  });
  done = true;
  hostile.join();
  for (int call = 0; call < calls; ++call) {
    const std::vector<float> want = RankOrderSum(500 + call, g.w, n);
    for (uint32_t r = 0; r < g.w; ++r) {
      INFO("rank " << r << " call " << call);
      REQUIRE(connected[r].ok());
      REQUIRE(statuses[r][call].ok());
      CHECK(SameBits(results[r][call], want));
    }
  }
  const std::string text = log.Text();
  INFO(text);
  CHECK(Contains(text, "rank 1's collective listener"));
  CHECK(Contains(text, "refused a connection from 127.0.0.1:"));
  CHECK(Contains(text, "not TLS"));
  CHECK(Contains(text, "another cluster secret"));
  CHECK(Contains(text, "its hello is not one of this collective's"));
  CHECK(Contains(text, "this rank's predecessor is already connected"));
}

TEST_CASE("a TLS peer that dies mid-run breaks the collective at once, naming it", "[gpu][tls_collective]") {
  Group g;
  g.w = 3;
  g.timeout = std::chrono::milliseconds(20000);
  std::vector<Status> first(3), second(3), third(3);
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    std::vector<float> x(100, 1.0f);
    first[r] = c.AllReduceRankOrder(x.data(), x.size());
    if (r == 1) return;  // rank 1's collective closes its connections
    second[r] = c.AllReduceRankOrder(x.data(), x.size());
    third[r] = c.Barrier();
  });
  for (uint32_t r = 0; r < 3; ++r) {
    REQUIRE(connected[r].ok());
    REQUIRE(first[r].ok());
  }
  for (uint32_t r : {0u, 2u}) {
    INFO(second[r].message());
    CHECK(second[r].code() == Status::Code::kUnavailable);
    CHECK(Contains(second[r].message(), "all-reduce on rank " + std::to_string(r) + " of 3 failed (op 1)"));
    // A closed connection, not the 20 s timeout.
    CHECK_FALSE(Contains(second[r].message(), "within"));
    CHECK(third[r].message() == second[r].message());
  }
  CHECK(Contains(second[2].message(), "receiving from rank 1"));
}

TEST_CASE("a TLS peer that stops answering breaks the collective within the timeout", "[gpu][tls_collective]") {
  Group g;
  g.timeout = std::chrono::milliseconds(1000);
  std::vector<Status> first(2), second(2);
  std::atomic<bool> survivor_done{false};
  auto connected = g.Run([&](uint32_t r, Collective& c) {
    if (r == 1) {
      while (!survivor_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return;
    }
    std::vector<float> x(100, 1.0f);
    first[r] = c.AllReduceRankOrder(x.data(), x.size());
    second[r] = c.AllReduceRankOrder(x.data(), x.size());
    survivor_done = true;
  });
  REQUIRE(connected[0].ok());
  REQUIRE(connected[1].ok());
  INFO(first[0].message());
  CHECK(first[0].code() == Status::Code::kUnavailable);
  CHECK(Contains(first[0].message(), "all-reduce on rank 0 of 2 failed (op 0): receiving from rank 1"));
  CHECK(Contains(first[0].message(), "no data within 1000 ms"));
  CHECK(second[0].message() == first[0].message());
}

TEST_CASE("a frame whose header is not the expected one breaks the collective before its payload is read",
          "[gpu][tls_collective]") {
  // Rank 1 is played by the test with the cluster's keys: it connects as the
  // protocol says, then answers rank 0's all-reduce with a wrong frame.
  struct Forgery {
    const char* name;
    std::string header;
    const char* expect;
  };
  const std::string want = "where all-reduce op 0 broadcast chunk 0 of 40 bytes was expected";
  const Forgery forgery = GENERATE_COPY(
      Forgery{"another operation number", detail::TlsFrameHeader(1, 1, 5, 0, 40), "a frame of all-reduce op 5"},
      Forgery{"another operation", detail::TlsFrameHeader(2, 1, 0, 0, 40), "a frame of broadcast op 0"},
      Forgery{"another phase", detail::TlsFrameHeader(1, 0, 0, 0, 40), "a frame of all-reduce op 0 reduce"},
      Forgery{"another chunk", detail::TlsFrameHeader(1, 1, 0, 3, 40), "broadcast chunk 3 of 40 bytes"},
      Forgery{"a length of almost 4 GiB", detail::TlsFrameHeader(1, 1, 0, 0, 0xFFFFFFF0u), "of 4294967280 bytes"},
      Forgery{"bytes that are no header", std::string(24, 'x'), "bytes that are not a frame header"});
  INFO(forgery.name);
  Group g;
  g.chunk = 64;
  Status connect, reduced;
  std::thread rank0;
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{rank0};  // after the sessions below close, whatever failed
  rank0 = std::thread([&] {
    auto c = ConnectTls(g.Options(0));
    connect = c.status();
    if (!c.ok()) return;
    std::vector<float> x(10, 1.0f);
    reduced = (*c)->AllReduceRankOrder(x.data(), x.size());
  });
  // Rank 1's listener: publish it, take rank 0's connection and hello.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string endpoint = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  g.store->set(detail::TlsStoreKey(g.prefix, 1), std::vector<char>(endpoint.begin(), endpoint.end()));
  const auto keys = Keys(MemberOf(1));
  Session from0(::accept(listener, nullptr, nullptr), keys, true);
  ::close(listener);
  REQUIRE(from0.ok);
  REQUIRE(from0.Read(24) == detail::TlsHello(g.prefix, 0, 2));
  REQUIRE(from0.Write(detail::TlsAck(0)));
  // Connect to rank 0 as its predecessor.
  Session to0(Dial(PortOf(*g.store, g.prefix, 0)), keys, false);
  REQUIRE(to0.ok);
  REQUIRE(to0.Write(detail::TlsHello(g.prefix, 1, 2)));
  REQUIRE(to0.Read(8) == detail::TlsAck(0));
  // Rank 0 sends its 10 floats (reduce), then waits for the total.
  REQUIRE(from0.Read(24) == detail::TlsFrameHeader(1, 0, 0, 0, 40));
  REQUIRE(from0.Read(40).size() == 40);
  REQUIRE(to0.Write(forgery.header));
  rank0.join();  // before the sessions close: the header alone breaks it
  REQUIRE(connect.ok());
  INFO(reduced.message());
  CHECK(reduced.code() == Status::Code::kUnavailable);
  CHECK(Contains(reduced.message(), "all-reduce on rank 0 of 2 failed (op 0): receiving from rank 1"));
  CHECK(Contains(reduced.message(), forgery.expect));
  if (forgery.header != std::string(24, 'x')) CHECK(Contains(reduced.message(), want));
}

TEST_CASE("bad TLS collective options are reported, not crashed on", "[gpu][tls_collective]") {
  Group g;
  TlsCollectiveOptions o = g.Options(0);
  o.rank = 2;
  CHECK(ConnectTls(o).status().code() == Status::Code::kInvalidArgument);
  o.rank = 0;
  o.tls = nullptr;
  CHECK(ConnectTls(o).status().code() == Status::Code::kInvalidArgument);
  o = g.Options(0);
  o.store = nullptr;
  CHECK(ConnectTls(o).status().code() == Status::Code::kInvalidArgument);
  o = g.Options(0);
  o.members.pop_back();
  CHECK(ConnectTls(o).status().code() == Status::Code::kInvalidArgument);
  o = g.Options(0);
  o.address = "no-such-host.invalid";
  auto c = ConnectTls(o);
  CHECK(c.status().code() == Status::Code::kUnavailable);
  CHECK(Contains(c.status().message(), "no-such-host.invalid"));

  SECTION("W == 1 is the identity without keys or a store") {
    TlsCollectiveOptions solo;
    auto one = ConnectTls(solo);
    REQUIRE(one.ok());
    std::vector<float> x{-0.0f, 1.5f};
    CHECK((*one)->AllReduceRankOrder(x.data(), 2).ok());
    CHECK((*one)->Barrier().ok());
    CHECK(std::signbit(x[0]));
  }
}

}  // namespace actorrec::gpu
