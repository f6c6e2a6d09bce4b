// Two real `actorrec node` processes on 127.0.0.1, started from one topology:
// they find each other through CAF's middleman, prove the cluster secret,
// exchange Cap'n Proto heartbeats, and name the member that dies.
#include <signal.h>

#include <catch2/catch.hpp>

#include "tests/cluster/child_process.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto kStartup = 20s;  // generous: two cores may be busy with other tests

std::string Topology(uint16_t port_a, uint16_t port_b, const std::string& secret, int join_timeout_ms = 20000) {
  return R"(
[run]
name = "two-process-test"

[model]
kind = "dlrm"
bottom_mlp = [64, 16]
top_mlp = [64, 1]

[dataset]
samples = 4096

[cluster]
secret = ")" + secret + R"("
coordinator = "a"
heartbeat_ms = 100
peer_timeout_ms = 1000
join_timeout_ms = )" + std::to_string(join_timeout_ms) + R"(

[[cluster.member]]
name = "a"
address = "127.0.0.1"
port = )" + std::to_string(port_a) + R"(
roles = ["sampler", "oracle", "embedding"]

[[cluster.member]]
name = "b"
address = "127.0.0.1"
port = )" + std::to_string(port_b) + R"(
roles = ["trainer", "embedding"]
trainers = 2
)";
}

const std::string kSecret = "a-test-secret-of-enough-length";

struct Cluster {
  TempDir dir;
  uint16_t port_a = FreePort();
  uint16_t port_b = FreePort();
  std::string config = dir.File("topology.toml");

  explicit Cluster(const std::string& secret = kSecret, int join_timeout_ms = 20000) {
    WriteBytes(config, Topology(port_a, port_b, secret, join_timeout_ms));
  }
  std::unique_ptr<ChildProcess> Start(const std::string& member, const std::string& config_path) const {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{ActorrecBinary(), "node", "--config", config_path, "--member", member},
        dir.File(member + ".log"));
  }
  std::unique_ptr<ChildProcess> Start(const std::string& member) const { return Start(member, config); }
};

}  // namespace

TEST_CASE("two nodes join, exchange heartbeats, and the coordinator names the member that was killed",
          "[cluster]") {
  Cluster c;
  auto a = c.Start("a");
  auto b = c.Start("b");
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(a->WaitForLog("cluster ready: 2 member(s), 10 actors registered", kStartup));
  REQUIRE(a->WaitForLog("first heartbeat from member 'b'", 5s));
  REQUIRE(b->WaitForLog("first heartbeat answered by 'a'", 5s));
  REQUIRE(b->WaitForLog("joined coordinator 'a' at 127.0.0.1:" + std::to_string(c.port_a), 1s));

  b->Signal(SIGKILL);
  REQUIRE(b->WaitExit(5s) == 128 + SIGKILL);
  auto code = a->WaitExit(10s);
  INFO("log of a after the kill:\n" << a->Log());
  REQUIRE(code == 3);
  REQUIRE_THAT(a->Log(), Catch::Contains("member 'b' (127.0.0.1:" + std::to_string(c.port_b) +
                                         ", trainer+embedding) lost: connection lost"));
  REQUIRE_THAT(a->Log(), Catch::Contains("last completed batch: none"));
}

TEST_CASE("the member left behind names the coordinator that was killed", "[cluster]") {
  Cluster c;
  auto a = c.Start("a");
  auto b = c.Start("b");
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(a->WaitForLog("cluster ready", kStartup));
  a->Signal(SIGKILL);
  auto code = b->WaitExit(10s);
  INFO("log of b after the kill:\n" << b->Log());
  REQUIRE(code == 3);
  REQUIRE_THAT(b->Log(), Catch::Contains("coordinator 'a' at 127.0.0.1:" + std::to_string(c.port_a) + " lost"));
}

TEST_CASE("a node with another cluster secret is refused and the coordinator keeps waiting", "[cluster]") {
  Cluster c;
  const std::string wrong = c.dir.File("wrong-secret.toml");
  WriteBytes(wrong, Topology(c.port_a, c.port_b, "not-the-cluster-secret-at-all"));
  auto a = c.Start("a");
  auto intruder = c.Start("b", wrong);
  INFO("log of a:\n" << a->Log() << "\nlog of the intruder:\n" << intruder->Log());
  auto code = intruder->WaitExit(kStartup);
  REQUIRE(code == 4);
  REQUIRE_THAT(intruder->Log(), Catch::Contains("refused by coordinator 'a'"));
  REQUIRE_THAT(intruder->Log(), Catch::Contains("does not match; give every member the same cluster.secret"));
  REQUIRE(a->WaitForLog("refused 'b'", 5s));
  REQUIRE_THAT(a->Log(), Catch::Contains("wrong secret"));
  REQUIRE(a->running());

  // The right member still gets in afterwards.
  auto b = c.Start("b");
  REQUIRE(a->WaitForLog("cluster ready", kStartup));
  a->Signal(SIGTERM);
  REQUIRE(a->WaitExit(10s) == 0);
  REQUIRE(b->WaitExit(10s) == 0);
  REQUIRE_THAT(b->Log(), Catch::Contains("stopping: signal"));
}

TEST_CASE("a member that never joins is named when the join timeout passes", "[cluster]") {
  Cluster c(kSecret, 1500);
  auto a = c.Start("a");
  auto code = a->WaitExit(kStartup);
  INFO("log of a:\n" << a->Log());
  REQUIRE(code == 5);
  REQUIRE_THAT(a->Log(), Catch::Contains("member 'b' (127.0.0.1:" + std::to_string(c.port_b) +
                                         ", trainer+embedding) did not join within 1500 ms"));
  REQUIRE_THAT(a->Log(), Catch::Contains("--member b"));
}
