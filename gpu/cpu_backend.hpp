// The CPU backend: a BLAS sgemm on one thread per trainer, and plain loops
// over contiguous rows that the compiler vectorizes for pooling by slot.
//
// Which sgemm: oneDNN when the build found it, OpenBLAS otherwise. On the
// DLRM Criteo-Kaggle MLP at a trainer batch of 1024, oneDNN's sgemm (it
// picks AVX-512 at run time) took 1.9x less time than OpenBLAS pinned to its
// Haswell (AVX2) kernels by OPENBLAS_CORETYPE=Haswell (tools/bench/gemm_bench;
// with OPENBLAS_CORETYPE=SkylakeX the two are on par).
//
// Determinism: a GEMM's bits depend on the library, its kernel (the ISA it
// picked) and the thread count, never on timing. Every trainer of a run uses
// the same library on one thread, so the trainers agree bitwise; runs on
// different CPUs may not. The pooling loops add in the order backend.hpp
// states, and this library is built with -ffp-contract=off so that no FMA
// changes a rounding whatever -march the build uses.
#pragma once

#include <memory>

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace actorrec::gpu {

enum class CpuGemmLibrary { kOpenBlas, kOneDnn };

// Whether this build links oneDNN (libdnnl-dev was found).
bool CpuBackendHasOneDnn();

// The default library: oneDNN when built with it, else OpenBLAS.
std::unique_ptr<Backend> MakeCpuBackend();

// A chosen library, for comparisons and tests; NotSupported when this build
// lacks it.
Result<std::unique_ptr<Backend>> MakeCpuBackend(CpuGemmLibrary library);

}  // namespace actorrec::gpu
