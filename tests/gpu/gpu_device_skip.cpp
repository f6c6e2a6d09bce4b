// The GPU test program without a usable CUDA device: one line saying why
// and exit 77, which meson reports as skipped (Catch2 2.13 has no SKIP).
// Done while the program's statics are initialized, before Catch2's own
// main (tests/catch_main.cpp, shared with the other test programs, whose
// compilation takes half a minute) runs. ACTORREC_GPU_TESTS_ON_CPU set: the
// tests run with the CPU backend in the CUDA backend's place, to check the
// tests themselves on a machine without a GPU before GPU time is spent.
#include <cstdio>
#include <cstdlib>

#include "gpu/device_probe.hpp"

namespace {

const bool kDeviceUsable = [] {
  const actorrec::gpu::DeviceProbe probe = actorrec::gpu::ProbeDevices();
  if (std::getenv("ACTORREC_GPU_TESTS_ON_CPU") != nullptr) {
    std::printf("gpu-device tests on the CPU backend (ACTORREC_GPU_TESTS_ON_CPU): a check of the tests, not of CUDA\n");
    return false;
  }
  if (probe.cuda_devices == 0) {
    std::printf("gpu-device tests skipped: %s\n", probe.detail.c_str());
    std::fflush(stdout);
    std::_Exit(77);
  }
  std::printf("gpu-device tests on %s\n", probe.detail.c_str());
  return true;
}();

}  // namespace
