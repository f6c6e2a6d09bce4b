// The actorrec command line as a user meets it: help, the embedded default,
// subcommands that are not built yet, and bad configs.
#include <catch2/catch.hpp>

#include "tests/cluster/child_process.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {
struct Run {
  int code;
  std::string output;
};

Run Actorrec(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), ActorrecBinary());
  ChildProcess p(args, dir.File("out.log"));
  auto code = p.WaitExit(60s);
  return {code.value_or(-1), p.Log()};
}
}  // namespace

TEST_CASE("--help lists every subcommand and the exit codes", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"--help"});
  REQUIRE(r.code == 0);
  for (const char* sub : {"train", "node", "data", "plan", "inspect", "bench", "Exit codes"}) {
    INFO(sub);
    REQUIRE_THAT(r.output, Catch::Contains(sub));
  }
}

TEST_CASE("train on the embedded default starts every role, prints them and exits 0", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"train"});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("config <embedded local.toml>"));
  REQUIRE_THAT(r.output, Catch::Contains("backend: "));
  REQUIRE_THAT(r.output, Catch::Contains("1 member(s), 10 role actors registered"));
  for (const char* actor : {"batch_sampler", "oracle", "embedding_shard[1]", "trainer[1]", "cache_partition[0]",
                            "sync_scheduler[1]"}) {
    INFO(actor);
    REQUIRE_THAT(r.output, Catch::Contains(actor));
  }
  REQUIRE_THAT(r.output, Catch::Contains("training: not built yet"));
}

TEST_CASE("a subcommand that is not built yet says so and exits 6", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"data", "gen", "--preset", "criteo-kaggle"});
  REQUIRE(r.code == 6);
  REQUIRE_THAT(r.output, Catch::Contains("actorrec data: not built yet"));
}

TEST_CASE("a bad config is reported with file, line and key, and exits 2", "[cli]") {
  TempDir dir;
  const std::string bad = dir.File("bad.toml");
  WriteFile(bad, "[training]\nmode = \"lrp\"\n\n[[cluster.member]]\nname = \"x\"\naddress = \"127.0.0.1\"\n"
                 "roles = [\"all\"]\n[cluster]\nsecret = \"long-enough-secret-here\"\n");
  auto r = Actorrec(dir, {"train", "--config", bad});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains(bad + ":2: training.mode"));
  REQUIRE_THAT(r.output, Catch::Contains("lrpp_delayed"));
}

TEST_CASE("node refuses a --member that the topology does not name", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"node", "--config", std::string(ACTORREC_SOURCE_DIR) + "/configs/examples/two_hosts.toml",
                          "--member", "zz"});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains("--member zz is not in the topology; its members are: a, b"));
}
