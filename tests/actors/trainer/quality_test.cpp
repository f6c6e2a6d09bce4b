// Training learns: Wide&Deep and DeepFM on the UCI Adult data (datasets/adult)
// reach the test AUC such models are known to reach (>= 0.90).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "actors/run/lockstep_run.hpp"
#include "configs/config.hpp"

namespace actorrec::trainer {
namespace {

double AdultTestAuc(config::ModelKind kind, int epochs) {
  const std::string source = ACTORREC_SOURCE_DIR;
  config::Config cfg = config::LoadConfig(source + "/configs/adult.toml");
  const auto dir = std::filesystem::temp_directory_path() / ("actorrec-adult-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  cfg.run.output_dir = dir.string();
  cfg.dataset.mapping_file = (dir / "adult.mapping").string();
  cfg.model.kind = kind;
  cfg.training.epochs = epochs;
  auto run = LockstepRun::Create(cfg);
  INFO(run.status().message());
  REQUIRE(run.ok());
  StepReport step;
  while (true) {
    auto more = (*run)->Step(&step);
    INFO(more.status().message());
    REQUIRE(more.ok());
    if (!*more) break;
  }
  REQUIRE((*run)->Finish().ok());
  auto eval = (*run)->Evaluate(0);
  INFO(eval.status().message());
  REQUIRE(eval.ok());
  REQUIRE(eval->samples == 16281);
  std::filesystem::remove_all(dir);
  return eval->auc;
}

}  // namespace

TEST_CASE("Wide&Deep and DeepFM reach a test AUC of 0.90 on Adult", "[trainer][quality]") {
  const double wide_deep = AdultTestAuc(config::ModelKind::kWideDeep, 10);
  const double deepfm = AdultTestAuc(config::ModelKind::kDeepFm, 10);
  WARN("Adult test AUC: wide_deep " << wide_deep << ", deepfm " << deepfm);
  CHECK(wide_deep >= 0.90);
  CHECK(deepfm >= 0.90);
}

}  // namespace actorrec::trainer
