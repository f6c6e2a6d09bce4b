// The CUDA backend's factory, declared where plain g++ code can include it
// (no CUDA header): gpu/cuda/cuda_backend.cpp in a build with CUDA,
// gpu/cuda_backend_none.cpp (NotSupported) in one without.
#pragma once

#include <memory>

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

// A CudaBackend on `device` (docs/gpu.md): its own streams, cuBLAS handle
// and staging buffers, so each trainer of a process gets one and several
// share a GPU. NotSupported in a build without CUDA; Unavailable naming the
// device and the CUDA call when the device cannot be used.
Result<std::unique_ptr<Backend>> MakeCudaBackend(int device);

}  // namespace actorrec::gpu
