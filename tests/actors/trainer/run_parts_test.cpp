// The plan options a run derives from its config and its data: what the
// config alone cannot check.
#include "actors/run/run_parts.hpp"

#include <catch2/catch.hpp>

#include "configs/memory_check.hpp"
#include "tests/actors/trainer/test_config.hpp"

namespace actorrec::trainer {
namespace {

TEST_CASE("ideal refuses data whose rows its trainers could not all hold in this machine's memory", "[trainer]") {
  Case c;
  c.mode = "ideal";
  c.sparse = "adam";  // 4 weights + 9 floats of state: 52 bytes a row
  const config::Config cfg = config::ParseConfig(ConfigText(c), "");
  REQUIRE(DirectOptionsOf(cfg, {50, 300, 2000, 7}, 0).ok());
  // 2^31 - 1 rows x 2 trainers x 52 bytes: 223.3 GB.
  if (config::MachineMemory().bytes >= 223'338'299'288ull) {
    WARN("not checked: this machine has more memory than the test's tables need");
    return;
  }
  auto options = DirectOptionsOf(cfg, {2147483647}, 0);
  REQUIRE_FALSE(options.ok());
  REQUIRE(options.status().code() == Status::Code::kInvalidArgument);
  REQUIRE_THAT(options.status().message(),
               Catch::Contains("training.mode = \"ideal\" keeps every row (2147483647) in every trainer: at least "
                               "223.3 GB for 2 trainer(s), more than "));
  REQUIRE_THAT(options.status().message(), Catch::Contains(" of memory (use another mode)"));
}

TEST_CASE("a process makes backends only for the trainers it hosts", "[trainer]") {
  Case c;  // two trainers
  const config::Config cfg = config::ParseConfig(ConfigText(c), "run_parts.toml");
  auto all = RunParts::Create(cfg);
  REQUIRE(all.ok());
  CHECK((*all)->W() == 2);
  CHECK((*all)->backends.size() == 2);
  CHECK((*all)->idle_backend == nullptr);

  const std::vector<uint32_t> hosted = {1};
  auto member = RunParts::Create(cfg, &hosted);
  REQUIRE(member.ok());
  REQUIRE((*member)->W() == 2);  // every dense replica is still there
  CHECK((*member)->backends.size() == 1);
  REQUIRE((*member)->idle_backend != nullptr);
  // Trainer 1 trains on its own backend; trainer 0, which another member
  // hosts, never trains here and shares the idle CPU backend.
  CHECK(&(*member)->trainers[1]->model().backend() == (*member)->backends[0].get());
  CHECK(&(*member)->trainers[0]->model().backend() == (*member)->idle_backend.get());

  const std::vector<uint32_t> none;
  auto coordinator = RunParts::Create(cfg, &none);
  REQUIRE(coordinator.ok());
  CHECK((*coordinator)->backends.empty());
}

}  // namespace
}  // namespace actorrec::trainer
