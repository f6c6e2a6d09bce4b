// The GPU test program without a usable CUDA device: one line saying why
// and exit 77, which meson reports as skipped (Catch2 2.13 has no SKIP).
// Done while the program's statics are initialized, before Catch2's own
// main (tests/catch_main.cpp, shared with the other test programs, whose
// compilation takes half a minute) runs.
#include <cstdio>
#include <cstdlib>

#include "gpu/device_probe.hpp"

namespace {

const bool kDeviceUsable = [] {
  const actorrec::gpu::DeviceProbe probe = actorrec::gpu::ProbeDevices();
  if (probe.cuda_devices == 0) {
    std::printf("gpu-device tests skipped: %s\n", probe.detail.c_str());
    std::fflush(stdout);
    std::_Exit(77);
  }
  std::printf("gpu-device tests on %s\n", probe.detail.c_str());
  return true;
}();

}  // namespace
