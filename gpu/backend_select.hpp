// training.backend resolved to the backend every trainer of a process uses:
// the one place the choice between the CPU and the CUDA backend is made.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

struct BackendChoice {
  bool cuda = false;
  int device = 0;     // CUDA: every trainer of the process shares device 0
  std::string name;   // the backend's name() (device, versions; or the CPU sgemm)
  std::string note;   // why, where `auto` fell back to the CPU; else empty
  // For start-up lines: the name, then the note.
  std::string Line() const { return note.empty() ? name : name + "; " + note; }
};

// `requested`: "cpu", "cuda" or "auto" (the config loader refuses anything
// else). cpu: the CPU backend. cuda: the CUDA backend on device 0, or
// InvalidArgument naming training.backend and the reason (a build without
// CUDA, no usable device, the device refusing). auto: CUDA when a usable
// device exists, else the CPU backend with a note saying why.
Result<BackendChoice> ChooseBackend(std::string_view requested);

// One backend of the chosen kind, for one trainer (each gets its own).
// InvalidArgument naming training.backend when the device refuses.
Result<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice);

}  // namespace actorrec::gpu
