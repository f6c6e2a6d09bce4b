// The CPU check behind Kernel::kBest.
#include "actors/oracle/kernel.hpp"

namespace actorrec::oracle {

bool UseAvx512(Kernel kernel) {
#ifdef ACTORREC_HAVE_AVX512
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return kernel == Kernel::kBest && has;
#else
  (void)kernel;
  return false;
#endif
}

}  // namespace actorrec::oracle
