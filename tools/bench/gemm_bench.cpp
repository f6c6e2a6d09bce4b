// Single-thread sgemm rates for the DLRM Criteo-Kaggle MLP at one trainer's
// batch, OpenBLAS against oneDNN: decides which library the CPU backend uses
// (it switches only for a clear win, >= 1.15x on the total MLP time).
//
// Shapes (row-major, as models/model.cpp calls Backend::Gemm), per layer
// in → out at batch n:
//   fwd  Y[n×out]  = X[n×in] · Wᵀ       Gemm(N, T, n, out, in)
//   dX   dX[n×in]  = dY[n×out] · W      Gemm(N, N, n, in, out)
//   dW   dW[out×in] = dYᵀ · X            Gemm(T, N, out, in, n)
// The bottom MLP's first layer has no dX (the dense input needs no gradient).
//
// Usage: gemm_bench [batch, default 1024] [min seconds per measurement, default 0.2]
// Each shape is timed as the best of 3 measurements of at least that long.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/bench/bench_cli.hpp"

#ifdef ACTORREC_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
extern "C" void omp_set_num_threads(int);
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  std::string name;
  bool ta, tb;
  int m, n, k;
};

std::vector<Shape> MlpShapes(int batch) {
  std::vector<Shape> shapes;
  auto add_mlp = [&](const char* mlp, std::vector<int> widths, bool first_needs_dx) {
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
      const int in = widths[l], out = widths[l + 1];
      const std::string tag = std::string(mlp).append(" ").append(std::to_string(in)).append("-").append(
          std::to_string(out));
      shapes.push_back({tag + " fwd", false, true, batch, out, in});
      if (l > 0 || first_needs_dx) shapes.push_back({tag + " dX", false, false, batch, in, out});
      shapes.push_back({tag + " dW", true, false, out, in, batch});
    }
  };
  add_mlp("bottom", {13, 512, 256, 64, 16}, false);
  add_mlp("top", {367, 512, 256, 1}, true);
  return shapes;
}

using GemmFn = void (*)(const Shape&, const float*, const float*, float*);

void OpenBlasGemm(const Shape& s, const float* a, const float* b, float* c) {
  const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
  cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k,
              1.0f, a, lda, b, ldb, 0.0f, c, s.n);
}

#ifdef ACTORREC_HAVE_DNNL
void DnnlGemm(const Shape& s, const float* a, const float* b, float* c) {
  const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
  dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n);
}

const char* IsaName(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_sse41: return "sse41";
    default: return "other";
  }
}
#endif

// Seconds per call: the best of 3 runs of at least min_seconds each.
double TimeGemm(GemmFn fn, const Shape& s, double min_seconds) {
  std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f), c(size_t(s.m) * s.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.125f;
  fn(s, a.data(), b.data(), c.data());  // warm-up: first-call setup, caches
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    long calls = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      fn(s, a.data(), b.data(), c.data());
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int batch = 1024;
  double min_seconds = 0.2;
  CLI::App app{"Single-thread sgemm of the DLRM Criteo-Kaggle MLP shapes: OpenBLAS against oneDNN (when built with "
               "libdnnl-dev), GFLOP/s per shape.",
               "gemm_bench"};
  app.add_option("batch", batch, "rows of each GEMM (default 1024)")->check(CLI::Range(1, 1 << 20));
  app.add_option("min_seconds", min_seconds, "time each shape at least this long (default 0.2)")
      ->check(CLI::Range(1e-6, 3600.0));
  if (const int code = actorrec::bench::ParseArgs(app, argc, argv); code >= 0) return code;
  openblas_set_num_threads(1);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("single-thread sgemm, DLRM Criteo-Kaggle MLP, batch %d\n", batch);
  std::printf("OpenBLAS: %s, core %s (OPENBLAS_CORETYPE=%s)\n", openblas_get_config(), openblas_get_corename(),
              coretype ? coretype : "unset");
#ifdef ACTORREC_HAVE_DNNL
  omp_set_num_threads(1);
  std::printf("oneDNN: effective ISA %s\n", IsaName(dnnl_get_effective_cpu_isa()));
#else
  std::printf("oneDNN: not found at build time (libdnnl-dev)\n");
#endif

  double total_blas = 0, total_dnnl = 0;
  std::printf("\n%-22s %5s %5s %5s  %10s %10s %7s\n", "shape", "m", "n", "k", "OpenBLAS", "oneDNN", "ratio");
  std::printf("%-22s %5s %5s %5s  %10s %10s %7s\n", "", "", "", "", "GFLOP/s", "GFLOP/s", "dnnl/ob");
  for (const Shape& s : MlpShapes(batch)) {
    const double flops = 2.0 * s.m * s.n * s.k;
    const double t_blas = TimeGemm(OpenBlasGemm, s, min_seconds);
    total_blas += t_blas;
    std::printf("%-22s %5d %5d %5d  %10.1f", s.name.c_str(), s.m, s.n, s.k, flops / t_blas * 1e-9);
#ifdef ACTORREC_HAVE_DNNL
    const double t_dnnl = TimeGemm(DnnlGemm, s, min_seconds);
    total_dnnl += t_dnnl;
    std::printf(" %10.1f %7.2f\n", flops / t_dnnl * 1e-9, t_blas / t_dnnl);
#else
    std::printf(" %10s %7s\n", "-", "-");
#endif
  }
  std::printf("\nMLP GEMM time per sample (forward + backward): OpenBLAS %.3f us", total_blas / batch * 1e6);
  if (total_dnnl > 0) {
    std::printf(", oneDNN %.3f us, oneDNN speed-up %.2fx\n", total_dnnl / batch * 1e6, total_blas / total_dnnl);
  } else {
    std::printf("\n");
  }
  return 0;
}
