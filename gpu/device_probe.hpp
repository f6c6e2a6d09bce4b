// Whether this process sees a CUDA device: what `training.backend = "auto"`
// decides on (gpu/backend_select.hpp).
#pragma once

#include <string>

namespace actorrec::gpu {

struct DeviceProbe {
  bool cuda_built = false;  // compiled with the CUDA backend (meson option cuda)
  int cuda_devices = 0;     // devices the CUDA runtime reports, 0 on any error
  std::string detail;       // e.g. "NVIDIA H100 80GB HBM3, compute 9.0" or why there is none
};

// Asks the CUDA runtime (only the runtime API: a machine without a driver
// answers cudaErrorInsufficientDriver, which means "use the CPU").
DeviceProbe ProbeDevices();

}  // namespace actorrec::gpu
