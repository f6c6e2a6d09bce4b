// ACTORREC_HD marks a function that runs on both sides: `__host__ __device__`
// when nvcc compiles it, nothing when g++ does. Each CUDA kernel's work per
// element is such a function, so that the host test suite (always run, with
// or without a GPU) checks the very code the kernels run against the CPU
// backend, and a GPU run is needed only for what is truly device-side
// (launch geometry, memory, streams).
//
// Arithmetic in these functions must give the CPU backend's bits where the
// CPU result is a plain sum in a stated order: the CPU build uses
// -ffp-contract=off, so a product is rounded before it is added. nvcc fuses
// a*b+c into one FMA by default; cuda::Mul and cuda::Add spell the
// separate roundings out (__fmul_rn/__fadd_rn are never contracted).
#pragma once

#if defined(__CUDACC__)
#define ACTORREC_HD __host__ __device__ __forceinline__
#else
#define ACTORREC_HD inline
#endif

namespace actorrec::gpu::cuda {

#if defined(__CUDA_ARCH__)
ACTORREC_HD float Mul(float a, float b) { return __fmul_rn(a, b); }
ACTORREC_HD float Add(float a, float b) { return __fadd_rn(a, b); }
#else
ACTORREC_HD float Mul(float a, float b) { return a * b; }
ACTORREC_HD float Add(float a, float b) { return a + b; }
#endif

}  // namespace actorrec::gpu::cuda
