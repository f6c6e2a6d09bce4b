// The device probe of a build without CUDA.
#include "gpu/device_probe.hpp"

namespace actorrec::gpu {

DeviceProbe ProbeDevices() { return {false, 0, "this build has no CUDA backend (meson option cuda)"}; }

std::string DeviceUuid(int) { return ""; }

}  // namespace actorrec::gpu
