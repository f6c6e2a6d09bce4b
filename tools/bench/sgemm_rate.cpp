// Measuring the sgemm rate of a model's MLP shapes.
#include "tools/bench/sgemm_rate.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace actorrec::bench {

Result<SgemmRate> MeasureSgemmRate(const models::ModelSpec& spec, int slice, int threads,
                                   const gpu::BackendChoice& choice) {
  using Clock = std::chrono::steady_clock;
  const int n = slice;
  const std::vector<std::pair<int, int>> layers = models::MlpLayerShapes(spec);
  if (layers.empty()) return Status::InvalidArgument("no MLP layer to time: the model computes no GEMM");
  int widest = 1;
  for (auto [i, o] : layers) widest = std::max({widest, i, o});
  double flops_per_round = 0;
  for (auto [i, o] : layers) flops_per_round += 3.0 * 2.0 * n * i * o;  // forward, dX, dW
  // Backends first: a creation error is returned before any thread starts.
  std::vector<std::unique_ptr<gpu::Backend>> backends;
  for (int k = 0; k < threads; ++k) {
    auto made = gpu::MakeBackend(choice);
    if (!made.ok()) return made.status();
    backends.push_back(std::move(made).value());
  }
  // Each thread: one untimed round (oneDNN generates its kernels at the
  // first call), then `repeats` timed runs of `rounds` rounds.
  const int rounds = 8, repeats = 5;
  auto work = [&](gpu::Backend* backend, std::vector<double>* seconds) {
    const size_t w = static_cast<size_t>(widest);
    std::vector<float> x(size_t(n) * w, 0.5f), wt(w * w, 0.25f), y(size_t(n) * w), g(w * w);
    auto round = [&] {
      for (auto [i, o] : layers) {
        backend->Gemm(false, true, n, o, i, 1.0f, x.data(), i, wt.data(), i, 0.0f, y.data(), o);   // Y = X·Wᵀ
        backend->Gemm(false, false, n, i, o, 1.0f, y.data(), o, wt.data(), i, 0.0f, x.data(), i);  // dX = dY·W
        backend->Gemm(true, false, o, i, n, 1.0f, y.data(), o, x.data(), i, 0.0f, g.data(), i);    // dW = dYᵀ·X
      }
    };
    round();
    for (int rep = 0; rep < repeats; ++rep) {
      const auto start = Clock::now();
      for (int r = 0; r < rounds; ++r) round();
      seconds->push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  };
  std::vector<std::vector<double>> seconds(threads);
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(work, backends[k].get(), &seconds[k]);
  work(backends[0].get(), &seconds[0]);
  for (auto& th : pool) th.join();
  // The limit is the best repeat (a shared VM only ever slows a measurement
  // down).
  SgemmRate rate;
  for (int rep = 0; rep < repeats; ++rep) {
    double slowest = 0;
    for (const auto& s : seconds) slowest = std::max(slowest, s[rep]);
    const double gflops = flops_per_round * rounds * threads / slowest / 1e9;
    rate.best = std::max(rate.best, gflops);
    rate.worst = rep == 0 ? gflops : std::min(rate.worst, gflops);
  }
  return rate;
}

}  // namespace actorrec::bench
