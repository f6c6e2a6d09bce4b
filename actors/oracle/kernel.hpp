// Kernel: which code the oracle's hot loops run, the per-slice dedup
// (BatchRowsBuilder) and the plan passes (LookaheadCore). Every kernel gives
// the same output, bit for bit: results never depend on the machine, only
// the speed does.
#pragma once

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
