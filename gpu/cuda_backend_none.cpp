// The CUDA backend's factory in a build without CUDA.
#include "gpu/cuda_backend.hpp"

namespace actorrec::gpu {

Result<std::unique_ptr<Backend>> MakeCudaBackend(int device) {
  return Status::NotSupported("cuda backend (device " + std::to_string(device) +
                              "): this build has no CUDA backend (install the CUDA toolkit so that nvcc is on the "
                              "PATH, then reconfigure and rebuild: meson setup --reconfigure build)");
}

}  // namespace actorrec::gpu
