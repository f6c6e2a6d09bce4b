// Which CUDA device each trainer of a process runs on, and whether those
// trainers can each be an NCCL rank (docs/gpu.md "Several GPUs on one
// host"). Plain logic: no CUDA header; the host tests run it.
//
//   assignment: the k-th trainer a process hosts (in rank order) runs on
//     devices[k mod n], where devices is training.devices when the config
//     gives it, else every device the process sees, 0 … count − 1 (trainer
//     w on device w mod count). More trainers than devices share them, as
//     W stream sets on one GPU.
//   NCCL: a process's trainers can be NCCL ranks only when no two of them
//     share a device (NCCL refuses two ranks on one GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace actorrec::gpu {

// The device of each of a process's `trainers` trainers. `listed`:
// training.devices (empty: round-robin over every device); `device_count`:
// the devices the CUDA runtime reports. InvalidArgument naming
// training.devices and `config_path` when the list names a device the
// process does not see, or when there is no device at all.
Result<std::vector<int>> AssignDevices(const std::vector<int>& listed, int device_count, size_t trainers,
                                       const std::string& config_path);

// A trainer rank of this process and its device.
struct RankDevice {
  uint32_t rank = 0;
  int device = 0;
};

// Empty when every rank is on a device of its own; else says which ranks
// share which device, e.g. "trainer ranks 0 and 2 share CUDA device 1".
std::string SharedDeviceOf(const std::vector<RankDevice>& ranks);

// "0, 1, 0": the devices of the ranks in order (for start-up lines).
std::string DeviceList(const std::vector<RankDevice>& ranks);

}  // namespace actorrec::gpu
