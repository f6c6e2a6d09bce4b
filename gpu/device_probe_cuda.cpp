// The device probe of a CUDA build: cudart's device count and properties.
#include <cuda_runtime_api.h>

#include "gpu/device_probe.hpp"

namespace actorrec::gpu {

DeviceProbe ProbeDevices() {
  DeviceProbe probe;
  probe.cuda_built = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    probe.detail = std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")";
    cudaGetLastError();  // clear the sticky error for later callers
    return probe;
  }
  probe.cuda_devices = count;
  if (count == 0) {
    probe.detail = "no usable CUDA device (the CUDA runtime reports none)";
    return probe;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    probe.detail = std::string(prop.name) + ", compute " + std::to_string(prop.major) + "." +
                   std::to_string(prop.minor) + ", " + std::to_string(prop.totalGlobalMem >> 20) + " MiB";
  }
  return probe;
}

}  // namespace actorrec::gpu
