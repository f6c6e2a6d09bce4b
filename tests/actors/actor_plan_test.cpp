// The actor plan and member selection: which actors a member hosts, and which
// member `actorrec node` flags pick.
#include "actors/node/actor_plan.hpp"

#include <catch2/catch.hpp>

#include "actors/node/member_select.hpp"
#include "tests/actors/cluster_fixture.hpp"

using namespace actorrec;

namespace {
std::vector<std::string> Names(const std::vector<PlannedActor>& actors) {
  std::vector<std::string> out;
  for (const auto& a : actors) out.push_back(a.name);
  return out;
}
}  // namespace

TEST_CASE("each member hosts its roles' actors with cluster-wide indices", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  REQUIRE(Names(ActorsOf(cluster.members[0])) ==
          std::vector<std::string>{"batch_sampler", "oracle", "embedding_shard[0]"});
  REQUIRE(Names(ActorsOf(cluster.members[1])) ==
          std::vector<std::string>{"embedding_shard[1]", "embedding_shard[2]", "trainer[0]", "cache_partition[0]",
                                   "sync_scheduler[0]", "trainer[1]", "cache_partition[1]", "sync_scheduler[1]"});
  REQUIRE(ActorsOf(cluster).size() == 11);
  REQUIRE(ActorsOf(cluster.members[1])[2].index == 0);
  REQUIRE(ActorsOf(cluster.members[1])[2].role == wire::Role::TRAINER);
}

TEST_CASE("--member picks a member by name and checks --role against it", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  REQUIRE(*SelectMember(cluster, "b", "", 0) == "b");
  REQUIRE(*SelectMember(cluster, "b", "trainer", 0) == "b");
  auto wrong = SelectMember(cluster, "a", "trainer", 0);
  REQUIRE_FALSE(wrong.ok());
  REQUIRE_THAT(wrong.status().message(), Catch::Contains("runs sampler, oracle, embedding"));
  auto missing = SelectMember(cluster, "z", "", 0);
  REQUIRE_THAT(missing.status().message(), Catch::Contains("its members are: a, b"));
}

TEST_CASE("--role with --rank picks among the members running that role", "[actors]") {
  auto cluster = testing::TwoMemberCluster();
  REQUIRE(*SelectMember(cluster, "", "embedding", 0) == "a");
  REQUIRE(*SelectMember(cluster, "", "embedding", 1) == "b");
  REQUIRE(*SelectMember(cluster, "", "oracle", 0) == "a");
  auto out_of_range = SelectMember(cluster, "", "embedding", 2);
  REQUIRE_THAT(out_of_range.status().message(), Catch::Contains("0: a, 1: b"));
  REQUIRE_FALSE(SelectMember(cluster, "", "all", 0).ok());
  REQUIRE_THAT(SelectMember(cluster, "", "painter", 0).status().message(), Catch::Contains("is not a role"));
  REQUIRE_THAT(SelectMember(cluster, "", "", 0).status().message(), Catch::Contains("several members"));
}
