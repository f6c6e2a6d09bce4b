// --set overrides (config::LoadConfigWith): applied on top of the file,
// validated as the file is, their problems named by the --set that gave
// them, and part of the config digest.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "configs/config.hpp"
#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;

namespace {

std::string OverrideError(const std::string& path, std::vector<std::string> overrides) {
  try {
    LoadConfigWith(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("the config loaded");
  return "";
}

}  // namespace

TEST_CASE("--set replaces values of the file, adds keys and tables, and takes bare text as a string", "[configs]") {
  TempDir dir;
  const std::string path = dir.Write("c.toml", kValid);
  const std::vector<std::string> overrides = {"training.batch_size=1024", "training.mode=lrpp",
                                              "model.bottom_mlp=[32, 16]", "optimizer.dense_lr=0.5",
                                              "dataset.generator.skew=\"uniform\"", "run.name=x-1"};
  Config c = LoadConfigWith(path, overrides);
  REQUIRE(c.training.batch_size == 1024);
  REQUIRE(c.training.mode == Mode::kLrpp);
  REQUIRE(c.model.bottom_mlp == std::vector<int>{32, 16});
  REQUIRE(c.optimizer.dense_lr == 0.5);
  REQUIRE(c.dataset.generator.skew == "uniform");
  REQUIRE(c.run.name == "x-1");
  REQUIRE(c.overrides == overrides);
  // A later --set of the same key wins.
  REQUIRE(LoadConfigWith(path, std::vector<std::string>{"training.batch_size=1024", "training.batch_size=2048"})
              .training.batch_size == 2048);
  // The embedded default takes overrides too.
  REQUIRE(LoadConfigWith("", std::vector<std::string>{"training.max_batches=3"}).training.max_batches == 3);
}

TEST_CASE("the digest covers the overrides, so cluster members must agree on them", "[configs]") {
  TempDir dir;
  const std::string path = dir.Write("c.toml", kValid);
  const std::string plain = LoadConfig(path).digest;
  REQUIRE(LoadConfigWith(path, {}).digest == plain);
  const std::string a = LoadConfigWith(path, std::vector<std::string>{"training.batch_size=1024"}).digest;
  const std::string b = LoadConfigWith(path, std::vector<std::string>{"training.batch_size=2048"}).digest;
  REQUIRE(a != plain);
  REQUIRE(a != b);
}

TEST_CASE("a bad --set is named by the --set, not by a line of the file", "[configs]") {
  TempDir dir;
  const std::string path = dir.Write("c.toml", kValid);
  const std::string error =
      OverrideError(path, {"training.batch_size=1001", "training.mdoe=lrpp", "model.kind=xyz", "run.seed=abc"});
  REQUIRE_THAT(error, Catch::Contains("--set training.batch_size=1001: training.batch_size: expected a multiple of "
                                      "the number of trainers"));
  REQUIRE_THAT(error, Catch::Contains("--set training.mdoe=lrpp: training.mdoe: unknown key (did you mean mode?)"));
  REQUIRE_THAT(error, Catch::Contains("--set model.kind=xyz: model.kind: expected one of dlrm"));
  REQUIRE_THAT(error, Catch::Contains("--set run.seed=abc: run.seed: expected"));
  REQUIRE_THAT(error, !Catch::Contains(path + ":"));
}

TEST_CASE("a malformed --set, or one under a value or an array of tables, is refused", "[configs]") {
  TempDir dir;
  const std::string path = dir.Write("c.toml", kValid);
  REQUIRE_THAT(OverrideError(path, {"training.batch_size"}), Catch::Contains("--set training.batch_size: expected key=value"));
  REQUIRE_THAT(OverrideError(path, {"batch_size=4"}), Catch::Contains("the key names its table too"));
  REQUIRE_THAT(OverrideError(path, {"training..mode=lrpp"}), Catch::Contains("dotted name"));
  REQUIRE_THAT(OverrideError(path, {"cluster.member.port=3"}),
               Catch::Contains("cluster.member is an array of tables, not a table"));
  REQUIRE_THAT(OverrideError(path, {"training.batch_size.x=1"}),
               Catch::Contains("training.batch_size is a value, not a table"));
  // A table the --set made where the file has no key: the reader refuses it,
  // and the problem names the --set.
  REQUIRE_THAT(OverrideError(path, {"training.mode.x=1"}),
               Catch::Contains("--set training.mode.x=1: training.mode: expected one of"));
}
