// training.backend resolved to the backend every trainer of a process uses:
// the one place the choice between the CPU and the CUDA backend is made.
//
// The device is probed once per process: the first ChooseBackend that needs
// it asks the CUDA runtime and makes one trial backend on device 0; later
// calls (actorrec's start-up line, then RunParts) reuse that answer, and the
// trial backend becomes the first one MakeBackend hands out.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

struct BackendChoice {
  bool cuda = false;
  int device = 0;        // CUDA: the device MakeBackend uses (RunParts sets each trainer's: AssignDevices)
  int device_count = 0;  // CUDA: the devices this process sees
  std::string name;   // the backend's name() (device, versions; or the CPU sgemm)
  std::string note;   // why `auto` chose as it did, or how `cuda` runs the model; else empty
  // For start-up lines: the name, then the note.
  std::string Line() const { return note.empty() ? name : name + "; " + note; }
};

// What ChooseBackend needs to know of the model: whether it runs
// device-resident on a backend with memory of its own (Model's
// RunsDeviceResident, docs/gpu.md), and its name for the start-up line.
struct ModelResidency {
  bool device_resident = true;
  std::string model = "dlrm";
};

// `requested`: "cpu", "cuda" or "auto" (the config loader refuses anything
// else). cpu: the CPU backend. cuda: the CUDA backend on device 0, or
// InvalidArgument naming training.backend and the reason (a build without
// CUDA, no usable device, the device refusing); a model that is not
// device-resident runs staged there, and the note says so. auto: CUDA when a
// usable device exists and the model runs device-resident on it, else the
// CPU backend with a note saying why (the staged path copies every
// activation over PCIe twice per op and is slower than the CPU).
Result<BackendChoice> ChooseBackend(std::string_view requested, const ModelResidency& model = {});

// The device as the probe found it, and the choice made from it (what
// ChooseBackend does after its probe; exposed so that tests can decide for
// a device this machine lacks).
struct DeviceAnswer {
  bool cuda_built = false;
  std::string name;  // device 0's backend name(), empty when unusable
  std::string why;   // why it is unusable
  int devices = 0;   // the devices the CUDA runtime reports (at least 1 where name is set)
};
Result<BackendChoice> ChooseFor(std::string_view requested, const DeviceAnswer& device, const ModelResidency& model);

// One backend of the chosen kind, for one trainer (each gets its own).
// InvalidArgument naming training.backend when the device refuses.
Result<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice);

// For tests: while a factory is set, MakeBackend for the CPU choice returns
// factory() instead (a fake device backend, say, so that a whole run takes
// a device's paths on the host). Set it before RunParts::Create and clear it
// (an empty function) after; not for concurrent runs.
void SetBackendFactoryForTests(std::function<std::unique_ptr<Backend>()> factory);

// How many times this process has probed the device (ChooseBackend's
// probe; for tests: at most 1).
int DeviceProbeCount();

}  // namespace actorrec::gpu
