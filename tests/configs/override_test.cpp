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

TEST_CASE("--set KEY= removes a key, a table or an array of tables; one that is not set is a problem", "[configs]") {
  TempDir dir;
  const std::string path = dir.Write("c.toml", kValid);
  // DLRM to Wide&Deep with the file's MLPs removed: the switch the README
  // used to say needs a copied file.
  const Config c = LoadConfigWith(path, std::vector<std::string>{"model.kind=wide_deep", "model.bottom_mlp=",
                                                                 "model.top_mlp=", "model.deep_mlp=[8, 1]"});
  REQUIRE(c.model.kind == ModelKind::kWideDeep);
  REQUIRE(c.model.deep_mlp == std::vector<int>{8, 1});
  // Removed, a key takes its default; a later --set may set it again.
  REQUIRE(LoadConfigWith(path, std::vector<std::string>{"training.batch_size="}).training.batch_size == 2048);
  REQUIRE(LoadConfigWith(path, std::vector<std::string>{"training.batch_size=", "training.batch_size=256"})
              .training.batch_size == 256);
  // Arrays of tables go whole: [[model.crosses]].
  const std::string crossed = dir.Write(
      "x.toml", Replace(Replace(kValid, "bottom_mlp = [64, 16]\ntop_mlp = [64, 1]\n",
                                "deep_mlp = [64, 1]\n[[model.crosses]]\ntables = [0, 1]\nbuckets = 10\n"),
                        "kind = \"dlrm\"", "kind = \"wide_deep\""));
  REQUIRE(LoadConfig(crossed).model.crosses.size() == 1);
  REQUIRE(LoadConfigWith(crossed, std::vector<std::string>{"model.crosses="}).model.crosses.empty());
  // Without the removal the MLP the new kind refuses is named.
  CHECK_THAT(OverrideError(path, {"model.kind=wide_deep", "model.deep_mlp=[8, 1]"}),
             Catch::Contains("model.bottom_mlp: applies only to kind = \"dlrm\""));
  // A key (or a table on its way) that is not set: nothing to remove, said.
  CHECK_THAT(OverrideError(path, {"training.batch_sise="}),
             Catch::Contains("--set training.batch_sise=: training.batch_sise is not set, so there is nothing to remove"));
  CHECK_THAT(OverrideError(path, {"optimizer.adam.beta1="}),
             Catch::Contains("--set optimizer.adam.beta1=: optimizer.adam.beta1 is not set"));
  // Removal changes the digest as any --set does.
  REQUIRE(LoadConfigWith(path, std::vector<std::string>{"training.batch_size="}).digest != LoadConfig(path).digest);
}
