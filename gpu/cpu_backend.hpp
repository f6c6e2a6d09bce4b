// The CPU backend: OpenBLAS sgemm on one thread per trainer, and plain loops
// over contiguous rows that the compiler vectorizes for pooling by slot.
#pragma once

#include "gpu/backend.hpp"

namespace actorrec::gpu {

std::unique_ptr<Backend> MakeCpuBackend();

}  // namespace actorrec::gpu
