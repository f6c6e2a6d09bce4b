#include "gpu/backend_select.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "gpu/cpu_backend.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/device_probe.hpp"

namespace actorrec::gpu {
namespace {

constexpr char kUseCpu[] = "; set training.backend = \"cpu\" (or \"auto\") to train on the CPU";

BackendChoice CpuChoice(std::string note) { return {false, 0, 0, MakeCpuBackend()->name(), std::move(note)}; }

std::atomic<int> probes{0};

// The process's one probe of the device: whether CUDA is built, and device
// 0's trial backend or why there is none.
struct Probed {
  DeviceAnswer answer;
  std::unique_ptr<Backend> trial;  // until MakeBackend takes it
};

std::mutex probe_mutex;

// REQUIRES: probe_mutex held. Never destroyed: a trial backend nobody took
// must not be torn down after the CUDA runtime at exit.
Probed& ProbeOnce() {
  static Probed& probed = *new Probed([] {
    ++probes;
    Probed p;
    const DeviceProbe probe = ProbeDevices();
    p.answer.cuda_built = probe.cuda_built;
    if (!probe.cuda_built) return p;
    if (probe.cuda_devices == 0) {
      p.answer.why = probe.detail;
      return p;
    }
    auto backend = MakeCudaBackend(0);
    if (!backend.ok()) {
      p.answer.why = "device 0 refused: " + backend.status().message();
      return p;
    }
    p.trial = std::move(backend).value();
    p.answer.name = p.trial->name();
    p.answer.devices = probe.cuda_devices;
    return p;
  }());
  return probed;
}

}  // namespace

int DeviceProbeCount() { return probes.load(); }

Result<BackendChoice> ChooseBackend(std::string_view requested, const ModelResidency& model) {
  if (requested != "cuda" && requested != "auto") return ChooseFor(requested, {}, model);
  std::lock_guard<std::mutex> lock(probe_mutex);
  return ChooseFor(requested, ProbeOnce().answer, model);
}

Result<BackendChoice> ChooseFor(std::string_view requested, const DeviceAnswer& device, const ModelResidency& model) {
  if (requested == "cpu") return CpuChoice("");
  if (requested != "cuda" && requested != "auto") {
    return Status::InvalidArgument("training.backend = \"" + std::string(requested) +
                                   "\": expected \"cpu\", \"cuda\" or \"auto\"");
  }
  const bool required = requested == "cuda";
  if (!device.cuda_built) {
    if (!required) return CpuChoice("training.backend = auto: this build has no CUDA backend: using the CPU backend");
    return Status::InvalidArgument(
        "training.backend = \"cuda\": this build has no CUDA backend. Install the CUDA toolkit so that nvcc is on "
        "the PATH, then reconfigure and rebuild (meson setup --reconfigure build && ninja -C build)" +
        std::string(kUseCpu));
  }
  if (!device.name.empty()) {
    const int count = std::max(device.devices, 1);
    if (model.device_resident) {
      return BackendChoice{true, 0, count, device.name,
                           required ? "" : "training.backend = auto: " + model.model + " runs device-resident"};
    }
    if (required) {
      return BackendChoice{true, 0, count, device.name,
                           model.model + " is not device-resident yet: its GEMMs and pooling run staged (docs/gpu.md)"};
    }
    return CpuChoice("training.backend = auto: " + model.model +
                     " is not device-resident on CUDA yet, and its staged path (every activation over PCIe per op) "
                     "is slower than the CPU: using the CPU backend");
  }
  if (!required) return CpuChoice("training.backend = auto: " + device.why + ": using the CPU backend");
  return Status::InvalidArgument("training.backend = \"cuda\": " + device.why + kUseCpu);
}

namespace {
std::function<std::unique_ptr<Backend>()>& TestFactory() {
  static std::function<std::unique_ptr<Backend>()> factory;
  return factory;
}
}  // namespace

void SetBackendFactoryForTests(std::function<std::unique_ptr<Backend>()> factory) {
  std::lock_guard<std::mutex> lock(probe_mutex);
  TestFactory() = std::move(factory);
}

Result<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice) {
  if (!choice.cuda) {
    std::lock_guard<std::mutex> lock(probe_mutex);
    if (TestFactory()) return TestFactory()();
    return MakeCpuBackend();
  }
  {
    std::lock_guard<std::mutex> lock(probe_mutex);
    Probed& probed = ProbeOnce();
    if (probed.trial != nullptr && choice.device == 0) return std::move(probed.trial);
  }
  auto backend = MakeCudaBackend(choice.device);
  if (!backend.ok()) return Status::InvalidArgument("training.backend = \"cuda\": " + backend.status().message());
  return backend;
}

}  // namespace actorrec::gpu
