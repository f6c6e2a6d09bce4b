// Which CUDA device each trainer of a process takes (gpu/device_assignment.hpp),
// and the rule that NCCL follows from it: ranks join NCCL only when every
// trainer of every process is on a device of its own (NcclReadinessOf, then
// AgreeOnNccl across the processes), else they keep the host path, every
// rank naming the devices that are shared. Plain logic: no device needed.
#include "gpu/device_assignment.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gloo_collective.hpp"
#include "gpu/nccl_rendezvous.hpp"
#include "tests/gpu/rank_threads.hpp"

namespace actorrec::gpu {

using Catch::Matchers::Contains;

namespace {

// Four ranks as threads, each stating readiness(rank), agree on NCCL.
std::vector<Result<NcclAgreement>> AgreeFour(const std::function<NcclReadiness(uint32_t)>& readiness) {
  auto store = MakeInProcessStore();
  const std::string prefix = testing::UniquePrefix();
  std::vector<Result<NcclAgreement>> got(4, Status::Unavailable("not run"));
  std::vector<std::thread> ranks;
  for (uint32_t r = 0; r < 4; ++r) {
    ranks.emplace_back(
        [&, r] { got[r] = AgreeOnNccl(*store, prefix, r, 4, readiness(r), std::chrono::milliseconds(5000)); });
  }
  for (auto& t : ranks) t.join();
  return got;
}

}  // namespace

TEST_CASE("without training.devices trainer k of a process runs on device k mod the devices it sees", "[gpu]") {
  CHECK(AssignDevices({}, 1, 3, "c.toml").value() == std::vector<int>{0, 0, 0});
  CHECK(AssignDevices({}, 2, 5, "c.toml").value() == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(AssignDevices({}, 4, 2, "c.toml").value() == std::vector<int>{0, 1});
  CHECK(AssignDevices({}, 8, 0, "c.toml").value().empty());
}

TEST_CASE("training.devices places trainer k on devices[k mod size]", "[gpu]") {
  CHECK(AssignDevices({1, 0}, 2, 2, "c.toml").value() == std::vector<int>{1, 0});
  CHECK(AssignDevices({3, 1}, 4, 5, "c.toml").value() == std::vector<int>{3, 1, 3, 1, 3});
  CHECK(AssignDevices({2}, 3, 2, "c.toml").value() == std::vector<int>{2, 2});
}

TEST_CASE("a device the process does not see, or no device at all, is refused naming training.devices and the file",
          "[gpu]") {
  const auto missing = AssignDevices({0, 2}, 2, 2, "cluster.toml");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(missing.status().message(),
             Contains("cluster.toml: training.devices[1] = 2: no such device: this process sees 2 CUDA devices (0 … 1)"));
  // Even an entry no trainer would reach is checked: the list is wrong.
  CHECK(!AssignDevices({0, 5}, 2, 1, "c.toml").ok());
  CHECK(!AssignDevices({-1}, 2, 1, "c.toml").ok());
  const auto none = AssignDevices({}, 0, 1, "c.toml");
  REQUIRE(!none.ok());
  CHECK_THAT(none.status().message(), Contains("c.toml: training.devices") && Contains("sees 0 CUDA devices"));
}

TEST_CASE("shared devices are named by their first two ranks", "[gpu]") {
  CHECK(SharedDeviceOf({}).empty());
  CHECK(SharedDeviceOf({{0, 0}}).empty());
  CHECK(SharedDeviceOf({{0, 0}, {1, 1}, {2, 2}}).empty());
  CHECK(SharedDeviceOf({{3, 1}, {4, 0}, {5, 1}}) == "trainer ranks 3 and 5 share CUDA device 1");
  CHECK(DeviceList({{3, 1}, {4, 0}, {5, 1}}) == "1, 0, 1");
}

TEST_CASE("a process connects its NCCL ranks together only when each is in the group once, on a device of its own",
          "[gpu]") {
  CHECK(CheckProcessRanks(4, {{0, 0}, {1, 1}}).ok());
  CHECK(CheckProcessRanks(4, {{3, 0}}).ok());
  CHECK_THAT(CheckProcessRanks(4, {}).message(), Contains("no rank"));
  CHECK_THAT(CheckProcessRanks(2, {{0, 0}, {2, 1}}).message(), Contains("rank 2 is not in a group of size 2"));
  CHECK_THAT(CheckProcessRanks(4, {{1, 0}, {1, 1}}).message(), Contains("rank 1 is listed twice"));
  const Status shared = CheckProcessRanks(4, {{0, 1}, {1, 1}});
  CHECK(shared.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(shared.message(), Contains("trainer ranks 0 and 1 share CUDA device 1"));
}

// Two processes of two trainers each: ranks 0 and 1 in the first, 2 and 3
// in the second. Every rank states its process's readiness and all agree.
TEST_CASE("ranks agree on NCCL only when every trainer of every process is on a device of its own", "[gpu]") {
  const std::vector<int> second_devices = GENERATE(std::vector<int>{0, 1}, std::vector<int>{1, 1});
  const std::vector<RankDevice> first = {{0, 0}, {1, 1}};
  const std::vector<RankDevice> second = {{2, second_devices[0]}, {3, second_devices[1]}};
  const bool all_own = second_devices[0] != second_devices[1];
  const auto got =
      AgreeFour([&](uint32_t r) { return NcclReadinessOf(Status::Ok(), true, "cuda", r < 2 ? first : second); });
  for (uint32_t r = 0; r < 4; ++r) {
    INFO("rank " << r);
    REQUIRE(got[r].ok());
    CHECK(got[r]->all_ready == all_own);
    if (!all_own) {
      CHECK_THAT(got[r]->why_not, Contains("rank 2: its process hosts 2 trainers on CUDA devices 1, 1: trainer "
                                           "ranks 2 and 3 share CUDA device 1"));
    }
  }
}

// Two members on one host each number their GPUs from 0: their readiness
// holds each rank's GPU by its UUID (DeviceUuid), the same in every
// process, and a GPU named by two ranks is refused on every rank.
TEST_CASE("ranks agree on NCCL only when no two of them, in any process, name the same GPU", "[gpu]") {
  const bool shared = GENERATE(false, true);
  const std::vector<std::string> gpus = {"GPU-a", "GPU-b", shared ? "GPU-a" : "GPU-c", "GPU-d"};
  const auto got = AgreeFour([&](uint32_t r) {
    const std::vector<RankDevice> process = r < 2 ? std::vector<RankDevice>{{0, 0}, {1, 1}}
                                                  : std::vector<RankDevice>{{2, 0}, {3, 1}};
    NcclReadiness mine = NcclReadinessOf(Status::Ok(), true, "cuda", process);
    mine.gpu = gpus[r];
    mine.device = static_cast<int>(r % 2);
    return mine;
  });
  for (uint32_t r = 0; r < 4; ++r) {
    INFO("rank " << r);
    REQUIRE(got[r].ok());
    CHECK(got[r]->all_ready == !shared);
    if (shared) {
      CHECK(got[r]->why_not == "rank 2: its GPU GPU-a (device 0 of its process) is rank 0's too (device 0 of its "
                               "process), and NCCL refuses two ranks on one GPU (members sharing a host: "
                               "CUDA_VISIBLE_DEVICES or training.devices, one GPU per trainer)");
    }
  }
}

}  // namespace actorrec::gpu
