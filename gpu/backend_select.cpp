#include "gpu/backend_select.hpp"

#include "gpu/cpu_backend.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/device_probe.hpp"

namespace actorrec::gpu {
namespace {

constexpr char kUseCpu[] = "; set training.backend = \"cpu\" (or \"auto\") to train on the CPU";

BackendChoice CpuChoice(std::string note) { return {false, 0, MakeCpuBackend()->name(), std::move(note)}; }

}  // namespace

Result<BackendChoice> ChooseBackend(std::string_view requested) {
  if (requested == "cpu") return CpuChoice("");
  if (requested != "cuda" && requested != "auto") {
    return Status::InvalidArgument("training.backend = \"" + std::string(requested) +
                                   "\": expected \"cpu\", \"cuda\" or \"auto\"");
  }
  const bool required = requested == "cuda";
  const DeviceProbe probe = ProbeDevices();
  if (!probe.cuda_built) {
    if (!required) return CpuChoice("training.backend = auto: this build has no CUDA backend: using the CPU backend");
    return Status::InvalidArgument(
        "training.backend = \"cuda\": this build has no CUDA backend. Install the CUDA toolkit so that nvcc is on "
        "the PATH, then reconfigure and rebuild (meson setup --reconfigure build && ninja -C build)" +
        std::string(kUseCpu));
  }
  std::string why;
  if (probe.cuda_devices == 0) {
    why = probe.detail;
  } else {
    auto backend = MakeCudaBackend(0);
    if (backend.ok()) return BackendChoice{true, 0, (*backend)->name(), ""};
    why = "device 0 refused: " + backend.status().message();
  }
  if (!required) return CpuChoice("training.backend = auto: " + why + ": using the CPU backend");
  return Status::InvalidArgument("training.backend = \"cuda\": " + why + kUseCpu);
}

Result<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice) {
  if (!choice.cuda) return MakeCpuBackend();
  auto backend = MakeCudaBackend(choice.device);
  if (!backend.ok()) return Status::InvalidArgument("training.backend = \"cuda\": " + backend.status().message());
  return backend;
}

}  // namespace actorrec::gpu
