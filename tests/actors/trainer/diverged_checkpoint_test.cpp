// A run whose dense parameters are no longer all finite writes no
// checkpoint: the directory keeps its last good one and LATEST names it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <limits>

#include "actors/run/lockstep_run.hpp"
#include "configs/config.hpp"
#include "tests/actors/trainer/test_config.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::trainer {
namespace {

namespace fs = std::filesystem;

TEST_CASE("a checkpoint of non-finite dense parameters is refused and the last good one kept",
          "[trainer][checkpoint]") {
  Case c;
  auto run = LockstepRun::Create(config::ParseConfig(ConfigText(c), "diverged.toml"));
  REQUIRE(run.ok());
  ::actorrec::testing::TempDir dir;
  StepReport step;
  REQUIRE((*run)->Step(&step).ok());
  REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());  // batch-1: good
  REQUIRE((*run)->Step(&step).ok());
  // As if the optimizer had overflowed: a parameter turns infinite.
  auto params = (*run)->dense_params(0);
  const_cast<float*>(params.data())[params.size() / 2] = std::numeric_limits<float>::infinity();
  const Status saved = (*run)->SaveCheckpoint(dir.path());
  CHECK_FALSE(saved.ok());
  CHECK_THAT(saved.message(), Catch::Contains("after batch 2 are not all finite (training diverged)"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "batch-2"));
  std::ifstream latest(fs::path(dir.path()) / "LATEST");
  std::string name;
  std::getline(latest, name);
  CHECK(name == "batch-1");
}

}  // namespace
}  // namespace actorrec::trainer
