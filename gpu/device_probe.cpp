// Backend descriptions shared by both builds.
#include "gpu/device_probe.hpp"

namespace actorrec::gpu {

std::string DescribeBackend(const DeviceProbe& probe) {
  if (probe.cuda_devices > 0) {
    return "cuda (" + std::to_string(probe.cuda_devices) + " device(s); device 0: " + probe.detail + ")";
  }
  return "cpu (" + probe.detail + ")";
}

}  // namespace actorrec::gpu
