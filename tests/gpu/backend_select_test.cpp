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

TEST_CASE("a training.backend the loader would refuse is refused here too", "[gpu]") {
  auto bad = ChooseBackend("gpu");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Contains("training.backend = \"gpu\": expected \"cpu\", \"cuda\" or \"auto\""));
}

}  // namespace actorrec::gpu
