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

std::string DeviceUuid(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error for later callers
    return "";
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string uuid = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
    const auto byte = static_cast<unsigned char>(prop.uuid.bytes[i]);
    uuid += kHex[byte >> 4];
    uuid += kHex[byte & 15];
  }
  return uuid;
}

}  // namespace actorrec::gpu
