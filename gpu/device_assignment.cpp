#include "gpu/device_assignment.hpp"

#include <map>

namespace actorrec::gpu {

Result<std::vector<int>> AssignDevices(const std::vector<int>& listed, int device_count, size_t trainers,
                                       const std::string& config_path) {
  const std::string sees = "this process sees " + std::to_string(device_count) + " CUDA device" +
                           (device_count == 1 ? "" : "s") +
                           (device_count > 0 ? " (0 … " + std::to_string(device_count - 1) + ")" : "");
  if (device_count <= 0) {
    return Status::InvalidArgument(config_path + ": training.devices: no CUDA device to place trainers on: " + sees);
  }
  for (size_t i = 0; i < listed.size(); ++i) {
    if (listed[i] < 0 || listed[i] >= device_count) {
      return Status::InvalidArgument(config_path + ": training.devices[" + std::to_string(i) + "] = " +
                                     std::to_string(listed[i]) + ": no such device: " + sees +
                                     " (CUDA_VISIBLE_DEVICES renumbers them from 0)");
    }
  }
  std::vector<int> devices(trainers);
  for (size_t k = 0; k < trainers; ++k) {
    devices[k] = listed.empty() ? static_cast<int>(k % static_cast<size_t>(device_count)) : listed[k % listed.size()];
  }
  return devices;
}

std::string SharedDeviceOf(const std::vector<RankDevice>& ranks) {
  std::map<int, uint32_t> first_on;  // device -> the first rank on it
  for (const RankDevice& r : ranks) {
    auto [it, fresh] = first_on.emplace(r.device, r.rank);
    if (!fresh) {
      return "trainer ranks " + std::to_string(it->second) + " and " + std::to_string(r.rank) +
             " share CUDA device " + std::to_string(r.device);
    }
  }
  return "";
}

std::string DeviceList(const std::vector<RankDevice>& ranks) {
  std::string list;
  for (const RankDevice& r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r.device);
  return list;
}

}  // namespace actorrec::gpu
