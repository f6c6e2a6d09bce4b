// Cluster topology rules: unique names and endpoints, one sampler and one
// oracle, someone to embed and to train, a reachable coordinator, roles that
// exist, and a batch that splits evenly across the trainers.
#include "configs/config.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;
using Catch::Matchers::Contains;

namespace {

const std::string kTwo = kHead + kTwoMembers;

// The nth (0-based) occurrence of `needle` in `text`, as a line number.
int NthLine(const std::string& text, const std::string& needle, int n) {
  size_t at = text.find(needle);
  for (int i = 0; i < n && at != std::string::npos; ++i) at = text.find(needle, at + 1);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

}  // namespace

TEST_CASE("two valid members load with ranks and shards numbered in member order", "[configs]") {
  TempDir dir;
  Config c = LoadConfig(dir.Write("two.toml", kTwo));
  REQUIRE(c.cluster.members[0].embedding_shards == 1);
  REQUIRE(c.cluster.members[0].trainers == 0);
  REQUIRE(c.cluster.members[1].first_shard == 1);
  REQUIRE(c.cluster.members[1].first_trainer_rank == 0);
  REQUIRE(c.cluster.members[1].line == NthLine(kTwo, "[[cluster.member]]", 1));
  REQUIRE(c.cluster.Coordinator().name == "a");
}

TEST_CASE("an unknown role lists the roles and suggests the closest", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "roles = [\"trainer\", \"embedding\"]",
                             "roles = [\"embedding\", \"trainr\"]");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "trainr") +
                        "cluster.member[1].roles[1]: expected one of sampler, oracle, embedding, "
                        "trainer, all, spare; got \"trainr\" (did you mean trainer?)"));
}

TEST_CASE("a spare member has no roles, needs max_restarts, stands alone and is never the coordinator",
          "[configs]") {
  TempDir dir;
  const std::string spare = "\n[[cluster.member]]\nname = \"s\"\naddress = \"127.0.0.2\"\nroles = [\"spare\"]\n";
  const std::string recovering = Replace(kTwo, "[cluster]\n", "[cluster]\nmax_restarts = 2\n");
  Config c = LoadConfig(dir.Write("ok.toml", recovering + spare));
  REQUIRE(c.cluster.members.size() == 3);
  CHECK(c.cluster.members[2].roles.empty());
  CHECK(c.cluster.TotalTrainers() == 2);
  CHECK(c.cluster.Coordinator().name == "a");

  std::string path = dir.Write("no_restarts.toml", kTwo + spare);
  CHECK_THAT(LoadError(path), Contains("cluster.member[2].roles: member \"s\" is a spare") &&
                                  Contains("set cluster.max_restarts above 0"));
  const std::string mixed = Replace(recovering + spare, "roles = [\"spare\"]", "roles = [\"spare\", \"trainer\"]");
  path = dir.Write("mixed.toml", mixed);
  CHECK_THAT(LoadError(path), Contains("cluster.member[2].roles: \"spare\" stands alone"));
  path = dir.Write("coordinator.toml", Replace(recovering, "max_restarts = 2\n", "max_restarts = 2\ncoordinator = \"s\"\n") + spare);
  CHECK_THAT(LoadError(path), Contains("is a spare and cannot be cluster.coordinator"));
}

TEST_CASE("a role listed twice, or already included by all, is refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "roles = [\"all\"]", "roles = [\"all\", \"trainer\"]");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "roles") +
                                         "cluster.member[0].roles: lists the role trainer twice"));
}

TEST_CASE("a duplicate member name points at the first declaration", "[configs]") {
  TempDir dir;
  std::string text = kTwo + R"(
[[cluster.member]]
name = "b"
address = "127.0.0.1"
port = 7703
roles = ["embedding"]
)";
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(path + ":" + std::to_string(NthLine(text, "name = \"b\"", 1)) +
                        ": cluster.member[2].name: duplicate member name \"b\" (first declared on line " +
                        std::to_string(NthLine(text, "name = \"b\"", 0)) + ")"));
}

TEST_CASE("two members on the same address and port are refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "port = 7702", "port = 7701");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(path + ":" + std::to_string(NthLine(text, "port = 7701", 1)) +
                        ": cluster.member[1].port: 127.0.0.1:7701 is already used by member \"a\" (line " +
                        std::to_string(NthLine(text, "port = 7701", 0)) + ")"));
}

TEST_CASE("ephemeral ports never collide", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "port = 7702", "port = 0");
  REQUIRE_NOTHROW(LoadConfig(dir.Write("topo.toml", text)));
}

TEST_CASE("a cluster without a sampler is refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "[\"sampler\", \"oracle\", \"embedding\"]", "[\"oracle\", \"embedding\"]");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "[[cluster.member]]") +
                        "cluster.member: no member has the sampler role; exactly one must"));
}

TEST_CASE("a cluster with two oracles names both members", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "[\"trainer\", \"embedding\"]", "[\"trainer\", \"embedding\", \"oracle\"]");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "\"trainer\", \"embedding\", \"oracle\"") +
                        "cluster.member[1].roles: member \"b\" has the oracle role, but so does member "
                        "\"a\" (line " + std::to_string(LineOf(text, "\"sampler\"")) +
                        "); exactly one member must host the oracle"));
}

TEST_CASE("a cluster without a trainer is refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "roles = [\"trainer\", \"embedding\"]\ntrainers = 2",
                             "roles = [\"embedding\"]");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "[[cluster.member]]") +
                        "cluster.member: no member has the trainer role; at least one must"));
}

TEST_CASE("trainers is refused on a member without the trainer role", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "roles = [\"sampler\", \"oracle\", \"embedding\"]",
                             "roles = [\"sampler\", \"oracle\", \"embedding\"]\ntrainers = 1");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "trainers = 1") +
                        "cluster.member[0].trainers: allowed only for a member with the trainer role"));
}

TEST_CASE("a coordinator that is not a member is refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "[cluster]\n", "[cluster]\ncoordinator = \"c\"\n");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "coordinator") +
                                         "cluster.coordinator: no member is named \"c\"; expected one of a, b"));
}

TEST_CASE("the coordinator of a multi-member cluster needs a fixed port", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "port = 7701", "port = 0");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "port = 0") +
                        "cluster.member[0].port: member \"a\" is the coordinator (by default, the member "
                        "with the oracle role), which the other members connect to, so its port must not "
                        "be 0"));

  // An explicit coordinator is held to the same rule.
  text = Replace(kTwo, "port = 7702", "port = 0");
  text = Replace(text, "[cluster]\n", "[cluster]\ncoordinator = \"b\"\n");
  path = dir.Write("topo2.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "port = 0") +
                                         "cluster.member[1].port: member \"b\" is the coordinator, which"));
}

TEST_CASE("a batch that does not split evenly across the trainers is refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "trainers = 2", "trainers = 3");
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "batch_size") +
                        "training.batch_size: expected a multiple of the number of trainers in the "
                        "cluster (3, summed over all members)"));
  REQUIRE_THAT(LoadError(path), Contains("got 512; try 510 or 513"));
}

TEST_CASE("a cluster without members is refused", "[configs]") {
  TempDir dir;
  std::string text = kHead + "\n[cluster]\nsecret = \"0123456789abcdef-test\"\n";
  std::string path = dir.Write("topo.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "[cluster]") +
                                         "cluster.member: at least one [[cluster.member]] is required"));
}

TEST_CASE("a member's unknown key is reported with its index", "[configs]") {
  TempDir dir;
  std::string text = Replace(kTwo, "port = 7702", "prot = 7702");
  std::string path = dir.Write("topo.toml", text);
  std::string error = LoadError(path);
  REQUIRE_THAT(error, Contains(At(path, text, "prot") + "cluster.member[1].prot: unknown key (did you mean port?)"));
}
