// ACTORREC_VECTOR_CLONES, on a hot loop: the function is compiled for
// AVX-512, AVX2 and the baseline x86-64, and the best the CPU has is picked
// at load time (GCC's target_clones). The same code for each: without
// -ffast-math (and, where sums matter, with -ffp-contract=off: no fused
// multiply-add) the compiler keeps every operation and its order, so results
// do not depend on the machine, only the speed. Elsewhere than x86-64 the
// attribute is left out.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define ACTORREC_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ACTORREC_VECTOR_CLONES
#endif
