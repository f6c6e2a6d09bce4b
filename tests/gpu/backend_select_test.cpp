// training.backend resolved (gpu/backend_select.hpp): cpu always works;
// without a usable CUDA device (this machine, any CI runner) cuda is a
// config error naming the key and the reason, and auto falls back to the
// CPU saying why. Where a device is usable, both pick it.
#include <catch2/catch.hpp>

#include "gpu/backend_select.hpp"
#include "gpu/device_probe.hpp"

namespace actorrec::gpu {

using Catch::Matchers::Contains;

TEST_CASE("training.backend = cpu picks the CPU backend with nothing to add", "[gpu]") {
  auto choice = ChooseBackend("cpu");
  REQUIRE(choice.ok());
  CHECK_FALSE(choice->cuda);
  CHECK_THAT(choice->name, Catch::StartsWith("cpu ("));
  CHECK(choice->note.empty());
  auto backend = MakeBackend(*choice);
  REQUIRE(backend.ok());
  CHECK((*backend)->name() == choice->name);
}

TEST_CASE("training.backend = cuda without a usable device is refused; auto falls back and says why", "[gpu]") {
  const DeviceProbe probe = ProbeDevices();
  auto cuda = ChooseBackend("cuda");
  auto automatic = ChooseBackend("auto");
  REQUIRE(automatic.ok());
  if (probe.cuda_devices > 0) {  // a GPU machine: both use it
    REQUIRE(cuda.ok());
    CHECK(cuda->cuda);
    CHECK(automatic->cuda);
    CHECK_THAT(automatic->Line(), Catch::StartsWith("cuda (device 0: "));
    return;
  }
  REQUIRE_FALSE(cuda.ok());
  CHECK(cuda.status().code() == Status::Code::kInvalidArgument);
  const std::string why = cuda.status().message();
  CHECK_THAT(why, Catch::StartsWith("training.backend = \"cuda\": "));
  CHECK_THAT(why, Contains("set training.backend = \"cpu\""));
  if (probe.cuda_built) {
    CHECK_THAT(why, Contains(probe.detail));  // the runtime's reason, e.g. cudaErrorInsufficientDriver
    CHECK_THAT(why, Contains("no usable CUDA device ("));
  } else {
    CHECK_THAT(why, Contains("this build has no CUDA backend"));
    CHECK_THAT(why, Contains("nvcc is on the PATH"));
  }
  CHECK_FALSE(automatic->cuda);
  CHECK_THAT(automatic->name, Catch::StartsWith("cpu ("));
  CHECK_THAT(automatic->note, Catch::StartsWith("training.backend = auto: "));
  CHECK_THAT(automatic->note, Catch::EndsWith(": using the CPU backend"));
  CHECK_THAT(automatic->Line(), Contains(probe.cuda_built ? "no usable CUDA device (" : "this build has no CUDA"));
}

TEST_CASE("the device is probed once per process, however often the backend is chosen", "[gpu]") {
  for (int i = 0; i < 3; ++i) {
    (void)ChooseBackend("auto");
    (void)ChooseBackend("cuda");
    (void)ChooseBackend("auto", {false, "wide_deep"});
  }
  CHECK(DeviceProbeCount() == 1);
}

TEST_CASE("auto picks a usable device only for a model that runs device-resident on it", "[gpu]") {
  const DeviceAnswer gpu{true, "cuda (device 0: a test device)", ""};
  auto resident = ChooseFor("auto", gpu, {true, "dlrm"});
  REQUIRE(resident.ok());
  CHECK(resident->cuda);
  CHECK(resident->Line() == "cuda (device 0: a test device); training.backend = auto: dlrm runs device-resident");

  // The staged path (every activation over PCIe twice per op) is slower
  // than the CPU: auto does not take it, and says why.
  auto staged = ChooseFor("auto", gpu, {false, "new_model"});
  REQUIRE(staged.ok());
  CHECK_FALSE(staged->cuda);
  CHECK_THAT(staged->name, Catch::StartsWith("cpu ("));
  CHECK_THAT(staged->note, Catch::StartsWith("training.backend = auto: new_model is not device-resident on CUDA yet"));
  CHECK_THAT(staged->note, Catch::EndsWith("is slower than the CPU: using the CPU backend"));

  // Asked for by name, CUDA runs it staged and says so.
  auto asked = ChooseFor("cuda", gpu, {false, "new_model"});
  REQUIRE(asked.ok());
  CHECK(asked->cuda);
  CHECK_THAT(asked->note, Contains("new_model is not device-resident yet"));

  auto none = ChooseFor("auto", {true, "", "no usable CUDA device (test)"}, {true, "dlrm"});
  REQUIRE(none.ok());
  CHECK_FALSE(none->cuda);
  CHECK(none->note == "training.backend = auto: no usable CUDA device (test): using the CPU backend");
}

TEST_CASE("a training.backend the loader would refuse is refused here too", "[gpu]") {
  auto bad = ChooseBackend("gpu");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Contains("training.backend = \"gpu\": expected \"cpu\", \"cuda\" or \"auto\""));
}

}  // namespace actorrec::gpu
