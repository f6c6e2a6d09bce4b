// Membership: admission only with the secret, one process per name, and
// liveness judged by heartbeats against a clock the test drives.
#include "actors/supervisor/membership.hpp"

#include <catch2/catch.hpp>

#include "tests/actors/cluster_fixture.hpp"

using namespace actorrec;
using namespace std::chrono_literals;
using Clock = Membership::Clock;

namespace {

Membership::JoinRequest Request(const std::string& member, const std::string& secret, const std::string& nonce,
                                const std::string& digest = "cfg") {
  return {member, Membership::Proof(secret, nonce, member), "build-1", digest, 42, "host"};
}

}  // namespace

TEST_CASE("a member that proves the secret is admitted and counted as joined", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  const auto t0 = Clock::time_point{};
  Membership m(cluster, "build-1", "cfg", t0);
  auto nonce = m.Challenge("a", "nonce-a");
  auto v = m.Join(Request("a", cluster.secret, nonce), t0);
  REQUIRE(v.admitted());
  REQUIRE(m.Find("a")->state == Membership::State::kJoined);
  REQUIRE_FALSE(m.AllJoined());
  m.Challenge("b", "nonce-b");
  REQUIRE(m.Join(Request("b", cluster.secret, "nonce-b"), t0).admitted());
  REQUIRE(m.AllJoined());
}

TEST_CASE("a wrong secret is refused before anything about the member is revealed", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  Membership m(cluster, "build-1", "cfg", {});
  m.Challenge("zed", "n1");
  auto v = m.Join(Request("zed", "not-the-secret-at-all", "n1"), {});
  REQUIRE(v.refusal == Membership::Refusal::kWrongSecret);
  REQUIRE_THAT(v.message, Catch::Contains("cluster.secret"));
  m.Challenge("a", "n2");
  REQUIRE(m.Join(Request("a", "not-the-secret-at-all", "n2"), {}).refusal == Membership::Refusal::kWrongSecret);
  REQUIRE(m.Find("a")->state == Membership::State::kExpected);
}

TEST_CASE("a nonce admits at most once and a join needs a challenge", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  Membership m(cluster, "build-1", "cfg", {});
  REQUIRE(m.Join(Request("a", cluster.secret, "never-issued"), {}).refusal == Membership::Refusal::kNoChallenge);
  m.Challenge("a", "n1");
  auto replay = Request("a", cluster.secret, "n1");
  REQUIRE(m.Join(replay, {}).admitted());
  REQUIRE(m.Join(replay, {}).refusal == Membership::Refusal::kNoChallenge);
}

TEST_CASE("unknown names, second processes, other configs and other builds are refused", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  Membership m(cluster, "build-1", "cfg", {});
  m.Challenge("c", "n");
  REQUIRE(m.Join(Request("c", cluster.secret, "n"), {}).refusal == Membership::Refusal::kUnknownMember);
  m.Challenge("a", "n");
  REQUIRE(m.Join(Request("a", cluster.secret, "n", "other-cfg"), {}).refusal ==
          Membership::Refusal::kConfigMismatch);
  m.Challenge("a", "n");
  auto other_build = Request("a", cluster.secret, "n");
  other_build.build = "build-2";
  REQUIRE(m.Join(other_build, {}).refusal == Membership::Refusal::kBuildMismatch);
  m.Challenge("a", "n");
  REQUIRE(m.Join(Request("a", cluster.secret, "n"), {}).admitted());
  m.Challenge("a", "n");
  auto v = m.Join(Request("a", cluster.secret, "n"), {});
  REQUIRE(v.refusal == Membership::Refusal::kDuplicateMember);
  REQUIRE_THAT(v.message, Catch::Contains("pid 42"));
}

TEST_CASE("a joined member that stops sending heartbeats becomes silent after the peer timeout", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  const auto t0 = Clock::time_point{} + 1h;
  Membership m(cluster, "build-1", "cfg", t0);
  m.Challenge("a", "n");
  m.Join(Request("a", cluster.secret, "n"), t0);
  REQUIRE(m.Silent(t0 + 900ms).empty());
  REQUIRE(m.Heartbeat("a", 1, t0 + 900ms));
  REQUIRE(m.Silent(t0 + 1800ms).empty());
  REQUIRE(m.Silent(t0 + 1901ms) == std::vector<std::string>{"a"});
  REQUIRE_FALSE(m.Heartbeat("b", 1, t0));  // not joined
  REQUIRE(m.Find("a")->heartbeats == 1);
}

TEST_CASE("members missing at the join deadline are overdue, and a lost member stays lost", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  const auto t0 = Clock::time_point{} + 1h;
  Membership m(cluster, "build-1", "cfg", t0);
  m.Challenge("a", "n");
  m.Join(Request("a", cluster.secret, "n"), t0);
  REQUIRE(m.Overdue(t0 + 4999ms).empty());
  REQUIRE(m.Overdue(t0 + 5000ms) == std::vector<std::string>{"b"});
  REQUIRE(m.MarkLost("a", "connection lost"));
  REQUIRE_FALSE(m.MarkLost("a", "again"));
  REQUIRE(m.Silent(t0 + 1h).empty());
  m.Challenge("a", "n");
  auto v = m.Join(Request("a", cluster.secret, "n"), t0);
  REQUIRE(v.refusal == Membership::Refusal::kDuplicateMember);
  REQUIRE_THAT(v.message, Catch::Contains("connection lost"));
}

TEST_CASE("a flood of hellos under made-up names cannot grow the challenge table without bound", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  Membership m(cluster, "build-1", "cfg", {});
  for (size_t i = 0; i < Membership::kMaxPendingChallenges + 10; ++i) m.Challenge("stranger" + std::to_string(i), "n");
  m.Challenge("a", "fresh");
  REQUIRE(m.Join(Request("a", cluster.secret, "fresh"), {}).admitted());
}

// The two-member cluster and a third member 'c' like 'b': two trainer members.
config::ClusterConfig TwoTrainerMembers() {
  auto cluster = testing::TwoMemberCluster();
  config::Member c = cluster.members[1];
  c.name = std::string(1, 'c');  // moved in: assigning "c" trips GCC 12's -Wrestrict false positive
  c.port = 7703;
  cluster.members.push_back(c);
  return cluster;
}

TEST_CASE("trainer members whose GEMM kernels differ are admitted with a warning naming both", "[actors]") {
  const auto cluster = TwoTrainerMembers();
  Membership m(cluster, "build-1", "cfg", {});
  auto join = [&](const std::string& member, const std::string& kernels) {
    m.Challenge(member, "n-" + member);
    auto request = Request(member, cluster.secret, "n-" + member);
    request.gemm_kernels = kernels;
    return m.Join(request, {});
  };
  // 'a' hosts no trainer: its kernels set nothing and differ from nothing.
  auto a = join("a", "cpu (oneDNN sgemm avx2, 1 thread per trainer)");
  REQUIRE(a.admitted());
  REQUIRE(a.warning.empty());
  auto b = join("b", "cpu (oneDNN sgemm avx512_core, 1 thread per trainer)");
  REQUIRE(b.admitted());
  REQUIRE(b.warning.empty());
  auto c_joined = join("c", "cpu (oneDNN sgemm avx2, 1 thread per trainer)");
  REQUIRE(c_joined.admitted());
  REQUIRE_THAT(c_joined.warning, Catch::Contains("the trainers of 'c' compute with cpu (oneDNN sgemm avx2"));
  REQUIRE_THAT(c_joined.warning, Catch::Contains("those of 'b' with cpu (oneDNN sgemm avx512_core"));
  REQUIRE_THAT(c_joined.warning, Catch::Contains("ONEDNN_MAX_CPU_ISA"));
}

TEST_CASE("trainer members with the same GEMM kernels join without a warning", "[actors]") {
  const auto cluster = TwoTrainerMembers();
  Membership m(cluster, "build-1", "cfg", {});
  for (const std::string member : {"a", "b", "c"}) {
    m.Challenge(member, "n-" + member);
    auto request = Request(member, cluster.secret, "n-" + member);
    request.gemm_kernels = "cpu (oneDNN sgemm avx512_core, 1 thread per trainer)";
    auto v = m.Join(request, {});
    REQUIRE(v.admitted());
    REQUIRE(v.warning.empty());
  }
}

TEST_CASE("a member missing for half the join timeout is offered to a spare once, never the coordinator",
          "[actors]") {
  auto cluster = testing::TwoMemberCluster();  // join_timeout_ms = 5000
  const auto t0 = Clock::time_point{};
  {
    Membership none(cluster, "build-1", "cfg", t0);
    REQUIRE(!none.AwaitingSpare(t0 + 1h).has_value());  // no spare in the topology
  }
  config::Member s;  // roles = ["spare"]: no roles
  s.name = "s";
  s.address = "127.0.0.2";
  cluster.members.push_back(s);
  Membership m(cluster, "build-1", "cfg", t0);
  REQUIRE(m.Find("s") == nullptr);  // a spare is never waited for
  REQUIRE(!m.AwaitingSpare(t0 + 2499ms).has_value());
  // Neither a nor b has joined; a is the coordinator.
  REQUIRE(m.AwaitingSpare(t0 + 2500ms) == std::optional<std::string>("b"));
  m.AssignSpare("b", "s");
  REQUIRE(m.Find("b")->spare == "s");
  REQUIRE(!m.AwaitingSpare(t0 + 2500ms).has_value());
  // The spare joins under b's name; the join timeout still holds for the rest.
  m.Challenge("b", "n");
  REQUIRE(m.Join(Request("b", cluster.secret, "n"), t0 + 3000ms).admitted());
  REQUIRE(m.Overdue(t0 + 5000ms) == std::vector<std::string>{"a"});
}
