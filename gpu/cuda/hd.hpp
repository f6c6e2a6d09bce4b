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
//
// Division and the square root are correctly rounded on both sides too
// (__fdiv_rn/__fsqrt_rn on the device, whatever -prec-div/-prec-sqrt say;
// IEEE / and sqrtf on the CPU). Exp, Log1p and Pow are not: the device's
// expf/log1pf/powf have documented ulp bounds (CUDA C++ Programming Guide,
// Mathematical Functions: 2, 1 and 4 ulp), the CPU's are glibc's, so an op
// that uses them matches the CPU only within a bound (docs/gpu.md).
#pragma once

#include <cmath>

#if defined(__CUDACC__) && defined(__USE_FAST_MATH__)
#error "gpu/cuda must not be built with -use_fast_math: it changes + * / sqrt and every bound of docs/gpu.md"
#endif

#if defined(__CUDACC__)
#define ACTORREC_HD __host__ __device__ __forceinline__
#else
#define ACTORREC_HD inline
#endif

namespace actorrec::gpu::cuda {

#if defined(__CUDA_ARCH__)
ACTORREC_HD float Mul(float a, float b) { return __fmul_rn(a, b); }
ACTORREC_HD float Add(float a, float b) { return __fadd_rn(a, b); }
ACTORREC_HD float Sub(float a, float b) { return __fsub_rn(a, b); }
ACTORREC_HD float Div(float a, float b) { return __fdiv_rn(a, b); }
ACTORREC_HD float Sqrt(float a) { return __fsqrt_rn(a); }
ACTORREC_HD float Exp(float a) { return expf(a); }
ACTORREC_HD float Log1p(float a) { return log1pf(a); }
ACTORREC_HD float Pow(float a, float b) { return powf(a, b); }
#else
ACTORREC_HD float Mul(float a, float b) { return a * b; }
ACTORREC_HD float Add(float a, float b) { return a + b; }
ACTORREC_HD float Sub(float a, float b) { return a - b; }
ACTORREC_HD float Div(float a, float b) { return a / b; }
ACTORREC_HD float Sqrt(float a) { return std::sqrt(a); }
ACTORREC_HD float Exp(float a) { return std::exp(a); }
ACTORREC_HD float Log1p(float a) { return std::log1p(a); }
ACTORREC_HD float Pow(float a, float b) { return std::pow(a, b); }
#endif

}  // namespace actorrec::gpu::cuda
