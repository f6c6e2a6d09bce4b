// Kernel: which code the oracle's hot loops run, the per-slice dedup
// (BatchRowsBuilder) and the plan passes (LookaheadCore). Every kernel gives
// the same output, bit for bit: results never depend on the machine, only
// the speed does.
#pragma once

// ACTORREC_AVX512 marks a function compiled for the instruction sets that
// UseAvx512 checks (F, CD, BW, VL), where this compiler can emit them; the
// files with AVX-512 loops include <immintrin.h> under
// ACTORREC_HAVE_AVX512.
#if defined(__x86_64__) && defined(__GNUC__)
#define ACTORREC_HAVE_AVX512 1
#define ACTORREC_AVX512 __attribute__((target("avx512f,avx512cd,avx512bw,avx512vl")))
#endif

namespace actorrec::oracle {

enum class Kernel {
  kBest,      // AVX-512 where the CPU has it, else portable
  kPortable,  // scalar code only: for CPUs without AVX-512 and for tests that compare the two
};

// Whether `kernel` runs the AVX-512 loops here: kBest on a CPU with
// AVX-512 F, CD, BW and VL (every AVX-512 server CPU since 2017), checked
// once from CPUID.
bool UseAvx512(Kernel kernel);

}  // namespace actorrec::oracle
