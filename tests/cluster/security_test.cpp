// A coordinator's port against outsiders, with real processes on 127.0.0.1:
// a CAF client without the cluster's keys never reaches an actor, bytes that
// are not TLS and silent connections are refused and logged with the peer's
// address, and a member announcing a 2 GiB message is cut off before
// anything is allocated for it. The run goes on and ends as it would have.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster/child_process.hpp"
#include "tests/cluster/topology.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

std::string HostileBinary() {
  const char* bin = std::getenv("ACTORREC_HOSTILE_BIN");
  if (bin == nullptr) throw std::runtime_error("ACTORREC_HOSTILE_BIN is not set; run this test through meson test");
  return bin;
}

// A plain TCP connection to 127.0.0.1:port; its local port goes to *local.
int Connect(uint16_t port, uint16_t* local) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *local = ntohs(addr.sin_port);
  return fd;
}

// True when the peer closed `fd` within `timeout` (EOF or reset).
bool ClosedWithin(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[512];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    if (recv(fd, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

// The peak resident memory of a process, in KiB (VmHWM).
long PeakRssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

TEST_CASE("a CAF client without the cluster's keys cannot connect, look up actors or stop the run",
          "[cluster][security]") {
  TempDir dir;
  constexpr int kBatches = 40;
  const std::string single_dir = dir.File("single");
  WriteBytes(dir.File("single.toml"),
             SplitRun(single_dir, Member("one", 0, "\"all\"", "trainers = 2\nembedding_shards = 2\n"), "lrpp_delayed",
                      kBatches * 512));
  ChildProcess single({ActorrecBinary(), "train", "--config", dir.File("single.toml")}, dir.File("single.log"));
  INFO("log of the one-process run:\n" << single.Log());
  REQUIRE(single.WaitExit(120s) == 0);
  const std::string expected = DigestIn(ReadBytes(single_dir + "/metrics.jsonl"));
  REQUIRE(expected.size() == 16);

  const uint16_t port_a = FreePort();
  const std::string cluster_dir = dir.File("cluster");
  WriteBytes(dir.File("cluster.toml"),
             SplitRun(cluster_dir,
                      Member("a", port_a, "\"sampler\", \"oracle\", \"embedding\"", "embedding_shards = 2\n") +
                          Member("t", FreePort(), "\"trainer\"", "trainers = 2\n"),
                      "lrpp_delayed", kBatches * 512));
  ChildProcess a({ActorrecBinary(), "node", "--config", dir.File("cluster.toml"), "--member", "a"}, dir.File("a.log"));
  ChildProcess t({ActorrecBinary(), "node", "--config", dir.File("cluster.toml"), "--member", "t"}, dir.File("t.log"));
  INFO("log of a:\n" << a.Log() << "\nlog of t:\n" << t.Log());
  REQUIRE(a.WaitForLog("cluster ready", 60s));

  // As the outsider of issue 20 connected: CAF's remote_actor, then the
  // directory and Stop.
  ChildProcess outsider({HostileBinary(), "caf", "127.0.0.1", std::to_string(port_a)}, dir.File("outsider.log"));
  INFO("log of the outsider:\n" << outsider.Log());
  REQUIRE(outsider.WaitExit(60s) == 1);
  REQUIRE_THAT(outsider.Log(), Catch::Contains("refused"));
  REQUIRE_THAT(outsider.Log(), !Catch::Contains("connected to the supervisor") && !Catch::Contains("looked up") &&
                                   !Catch::Contains("sent Stop"));
  // The outsider speaks no TLS (CAF's client waits for the server to speak
  // first): it waits until the handshake timeout or the end of the run
  // closes it, whichever comes first (the next test sees the timeout).
  REQUIRE(a.WaitExit(120s) == 0);
  REQUIRE(t.WaitExit(60s) == 0);
  REQUIRE(DigestIn(ReadBytes(cluster_dir + "/metrics.jsonl")) == expected);
}

TEST_CASE("random bytes, an HTTP request, a silent peer and a 2 GiB message are refused and logged",
          "[cluster][security]") {
  TempDir dir;
  const uint16_t port_a = FreePort();
  WriteBytes(dir.File("cluster.toml"),
             SplitRun(dir.File("out"),
                      Member("a", port_a, "\"sampler\", \"oracle\", \"embedding\"") +
                          Member("t", FreePort(), "\"trainer\"", "trainers = 2\n"),
                      "lrpp_delayed", 200 * 512));
  ChildProcess a({ActorrecBinary(), "node", "--config", dir.File("cluster.toml"), "--member", "a"}, dir.File("a.log"));
  INFO("log of a:\n" << a.Log());
  REQUIRE(a.WaitForLog("coordinator listening", 30s));

  uint16_t random_port = 0, http_port = 0, idle_port = 0;
  const int random_fd = Connect(port_a, &random_port);
  const int http_fd = Connect(port_a, &http_port);
  const int idle_fd = Connect(port_a, &idle_port);
  const std::string random = "\x8f\x01\x77\xfe\x10\x00\x42\x99\x13\x37\xaa\x55\x00\xff\x01\x02";
  const std::string http = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(send(random_fd, random.data(), random.size(), 0) == static_cast<ssize_t>(random.size()));
  REQUIRE(send(http_fd, http.data(), http.size(), 0) == static_cast<ssize_t>(http.size()));
  CHECK(ClosedWithin(random_fd, 5s));
  CHECK(ClosedWithin(http_fd, 5s));
  CHECK(ClosedWithin(idle_fd, 20s));  // after the 10 s handshake timeout
  const std::string from = "refused connection from 127.0.0.1:";
  REQUIRE(a.WaitForLog(from + std::to_string(idle_port) + ": no TLS handshake within 10000 ms", 5s));
  CHECK_THAT(a.Log(), Catch::Contains(from + std::to_string(random_port) + ": not TLS"));
  CHECK_THAT(a.Log(), Catch::Contains(from + std::to_string(http_port) + ": an HTTP request, not TLS"));

  // A client holding the secret announces 2 GiB: cut off, nothing allocated.
  ChildProcess forger({HostileBinary(), "forge", "127.0.0.1", std::to_string(port_a), kTestSecret},
                      dir.File("forger.log"));
  INFO("log of the forger:\n" << forger.Log());
  CHECK(forger.WaitExit(30s) == 0);
  CHECK_THAT(forger.Log(), Catch::Contains("closed by the coordinator"));
  CHECK(a.WaitForLog("(member 'forger'): a message of 2147483648 bytes announced, above the limit", 5s));
  const long peak = PeakRssKib(a.pid());
  INFO("peak RSS of a: " << peak << " KiB");
  CHECK(peak > 0);
  CHECK(peak < 1024 * 1024);  // a 2 GiB buffer would have shown here

  // The coordinator lost nothing: the real member still joins.
  REQUIRE(a.running());
  ChildProcess t({ActorrecBinary(), "node", "--config", dir.File("cluster.toml"), "--member", "t"}, dir.File("t.log"));
  INFO("log of t:\n" << t.Log());
  REQUIRE(a.WaitForLog("cluster ready", 60s));
  a.Signal(SIGTERM);
  CHECK(a.WaitExit(20s).has_value());
  CHECK(t.WaitExit(20s).has_value());
}
