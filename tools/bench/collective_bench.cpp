// AllReduceRankOrder throughput of the TLS collective against Gloo's plain
// TCP, ranks as threads of this process on 127.0.0.1, in one run:
//
//   build/tools/bench/collective_bench [floats=1048576] [ranks=2] [rounds=20]
//
// Both groups are connected first; then the rounds alternate TLS, Gloo, TLS,
// … (one untimed round each first), so a busy spell of a shared machine
// slows both alike. Prints each collective's best and median time per
// all-reduce, the algorithm bandwidth (n floats / time) and TLS / Gloo.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/cluster_tls.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/tls_collective.hpp"
#include "tools/bench/bench_cli.hpp"

using namespace actorrec;
using Clock = std::chrono::steady_clock;

namespace {

// Connects `w` ranks with `connect` on threads; empty on a failure (printed).
std::vector<std::unique_ptr<gpu::Collective>> Connect(
    uint32_t w, const std::function<Result<std::unique_ptr<gpu::Collective>>(uint32_t)>& connect) {
  std::vector<std::unique_ptr<gpu::Collective>> out(w);
  std::vector<std::thread> threads;
  bool ok = true;
  for (uint32_t r = 0; r < w; ++r) {
    threads.emplace_back([&, r] {
      auto c = connect(r);
      if (!c.ok()) {
        std::fprintf(stderr, "rank %u: %s\n", r, c.status().ToString().c_str());
        ok = false;
        return;
      }
      out[r] = std::move(c).value();
    });
  }
  for (auto& t : threads) t.join();
  if (!ok) out.clear();
  return out;
}

// One all-reduce of `n` floats on every rank; seconds, or -1 on a failure.
double Round(std::vector<std::unique_ptr<gpu::Collective>>& group, std::vector<std::vector<float>>& data) {
  std::vector<std::thread> threads;
  std::vector<Status> st(group.size());
  const auto t0 = Clock::now();
  for (size_t r = 0; r < group.size(); ++r) {
    threads.emplace_back([&, r] { st[r] = group[r]->AllReduceRankOrder(data[r].data(), data[r].size()); });
  }
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (const auto& x : st) {
    if (!x.ok()) {
      std::fprintf(stderr, "%s\n", x.ToString().c_str());
      return -1;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = size_t{1} << 20;
  uint32_t w = 2;
  int rounds = 20;
  CLI::App app{"AllReduceRankOrder of the TLS collective against Gloo's plain TCP, ranks as threads on 127.0.0.1, "
               "alternated in one run.",
               "collective_bench"};
  app.add_option("floats", n, "floats per all-reduce (default 1048576)")->check(CLI::Range(size_t{1}, size_t{1} << 32));
  app.add_option("ranks", w, "ranks (threads, default 2)")->check(CLI::Range(uint32_t{2}, uint32_t{64}));
  app.add_option("rounds", rounds, "timed rounds of each (default 20)")->check(CLI::Range(1, 1000000));
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) return code;
  std::vector<std::shared_ptr<ClusterTls>> keys;
  for (uint32_t r = 0; r < w; ++r) {
    auto k = ClusterTls::Create("collective-bench-secret-only-here", "member-" + std::to_string(r));
    if (!k.ok()) {
      std::fprintf(stderr, "%s\n", k.status().ToString().c_str());
      return 1;
    }
    keys.push_back(std::move(k).value());
  }
  auto tls_store = gpu::MakeInProcessStore();
  auto gloo_store = gpu::MakeInProcessStore();
  auto tls = Connect(w, [&](uint32_t r) {
    gpu::TlsCollectiveOptions o;
    o.rank = r;
    o.size = w;
    o.tls = keys[r];
    o.store = tls_store;
    o.prefix = "bench-tls";
    return gpu::ConnectTls(o);
  });
  auto gloo = Connect(w, [&](uint32_t r) {
    gpu::GlooOptions o;
    o.rank = r;
    o.size = w;
    o.store = gloo_store;
    o.prefix = "bench-gloo";
    return gpu::ConnectGloo(o);
  });
  if (tls.empty() || gloo.empty()) return 1;
  std::vector<std::vector<float>> data(w, std::vector<float>(n));
  for (uint32_t r = 0; r < w; ++r)
    for (size_t i = 0; i < n; ++i) data[r][i] = static_cast<float>((i * 7 + r) % 1000) * 1e-3f;
  std::vector<double> t_tls, t_gloo;
  for (int k = -1; k < rounds; ++k) {  // round -1 is untimed
    const double a = Round(tls, data), b = Round(gloo, data);
    if (a < 0 || b < 0) return 1;
    if (k >= 0) t_tls.push_back(a), t_gloo.push_back(b);
  }
  std::sort(t_tls.begin(), t_tls.end());
  std::sort(t_gloo.begin(), t_gloo.end());
  const double bytes = static_cast<double>(n) * sizeof(float);
  auto line = [&](const char* name, const std::vector<double>& t) {
    std::printf("%-5s best %8.2f ms  median %8.2f ms  %7.0f MB/s (n floats / median)\n", name, 1e3 * t.front(),
                1e3 * t[t.size() / 2], bytes / t[t.size() / 2] / 1e6);
  };
  std::printf("AllReduceRankOrder of %zu floats, %u ranks (threads) on 127.0.0.1, %d rounds each, alternated\n", n,
              w, rounds);
  line("tls", t_tls);
  line("gloo", t_gloo);
  std::printf("tls / gloo: %.2f (best), %.2f (median)\n", t_tls.front() / t_gloo.front(),
              t_tls[t_tls.size() / 2] / t_gloo[t_gloo.size() / 2]);
  return 0;
}
