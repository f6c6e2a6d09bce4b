// The GPU test program's entry: Catch2 when a CUDA device is usable, else
// one line saying why and exit 77, which meson reports as skipped (Catch2
// 2.13 has no SKIP).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "gpu/device_probe.hpp"

int main(int argc, char** argv) {
  const actorrec::gpu::DeviceProbe probe = actorrec::gpu::ProbeDevices();
  if (probe.cuda_devices == 0) {
    std::printf("gpu-device tests skipped: %s\n", probe.detail.c_str());
    return 77;
  }
  std::printf("gpu-device tests on %s\n", probe.detail.c_str());
  return Catch::Session().run(argc, argv);
}
