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

// A name of CUDA device `device` that no other GPU has, whichever process
// (and CUDA_VISIBLE_DEVICES) numbers it: "GPU-" and its UUID, as
// nvidia-smi prints it. Empty where there is none (a build without CUDA, no
// such device): the NCCL agreement then cannot tell GPUs of two processes
// apart, and NCCL's own check remains.
std::string DeviceUuid(int device);

}  // namespace actorrec::gpu
