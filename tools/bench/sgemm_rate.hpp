// The sgemm rate of a model's MLP shapes on the backend training uses: the
// roofline of train_bench and the gemm_gflops of `actorrec bench --profile`.
#pragma once

#include "base/status.hpp"
#include "gpu/backend_select.hpp"
#include "models/model.hpp"

namespace actorrec::bench {

struct SgemmRate {
  double best = 0, worst = 0;  // GFLOP/s over the repeats, all threads together
};

// Every MLP layer's forward, input gradient and weight gradient GEMMs for a
// slice of `slice` samples, on `threads` threads at once (one backend
// each), 5 timed repeats after an untimed round. A repeat's rate is that of
// its slowest thread. The backend's creation error, if any.
Result<SgemmRate> MeasureSgemmRate(const models::ModelSpec& spec, int slice, int threads,
                                   const gpu::BackendChoice& choice);

}  // namespace actorrec::bench
