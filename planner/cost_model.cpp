// The cost model's equations (docs/planner.md).
#include "planner/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace actorrec::planner {

bool FetchOnCriticalPath(Mode mode) { return mode == Mode::kNoCache || mode == Mode::kStaticHot; }

std::string Prediction::Dominant() const {
  if (compute_s >= exposed_fetch_s && compute_s >= exposed_sync_s) return "compute";
  return exposed_fetch_s >= exposed_sync_s ? "fetch" : "sync";
}

double LinkSeconds(double bytes, const HardwareProfile& hw) {
  return bytes <= 0 ? 0.0 : bytes / hw.network_bw + hw.network_latency;
}

Collective CollectiveFor(const std::string& name, const HardwareProfile& hw) {
  if (name == "nccl" || (name == "auto" && hw.host_device_bw > 0)) return Collective::kAllGather;
  return Collective::kChain;
}

double ComputeShare(double cores, uint32_t trainers, uint32_t others) {
  const double busy = static_cast<double>(trainers) + others;
  if (cores <= 0 || busy <= cores) return 1.0;
  return cores / busy;
}

double ExpectedMaxOfNormals(uint32_t draws) {
  if (draws <= 1) return 0.0;
  // E[max] = ∫ x · n · φ(x) · Φ(x)^(n−1) dx; the midpoint rule on [−12, 12]
  // in steps of 1/1024 is exact to about 1e-9 for the counts used here.
  const double n = draws, step = 1.0 / 1024;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
  double sum = 0;
  for (double x = -12 + step / 2; x < 12; x += step) {
    const double pdf = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * n * pdf * std::pow(cdf, n - 1);
  }
  return sum * step;
}

double AllReduceBytes(double bytes, uint32_t trainers, Collective collective) {
  if (trainers <= 1 || bytes <= 0) return 0.0;
  return collective == Collective::kChain ? 2 * bytes : (trainers - 1.0) * bytes;
}

double AllReduceSeconds(double bytes, uint32_t trainers, Collective collective, const HardwareProfile& hw) {
  if (trainers <= 1 || bytes <= 0) return 0.0;
  // The chain's two phases each pass every link's bytes through W − 1 hops;
  // the all-gather's ring takes W − 1 steps.
  const double hops = collective == Collective::kChain ? 2 * (trainers - 1.0) : trainers - 1.0;
  return AllReduceBytes(bytes, trainers, collective) / hw.network_bw + hops * hw.network_latency;
}

Terms TermsOf(const Workload& work, const PlanRows& rows, const HardwareProfile& hw) {
  const double w = std::max<uint32_t>(work.trainers, 1);
  const double hosts = std::max<uint32_t>(work.shard_hosts, 1);
  const double slice = work.batch / w;
  Terms t;
  // Dense GEMMs, then three passes over the slice's embedding vectors in
  // memory: the gather, the gradient's scatter, the optimizer's update,
  // at the trainer's share of a core. A calibrated rate was measured where
  // the trainer ran, its share of the cores already in it.
  const bool calibrated = hw.trainer_flops > 0;
  const double topology_share = work.compute_share > 0 ? std::min(work.compute_share, 1.0) : 1.0;
  const double share = calibrated ? 1.0 : topology_share;
  t.compute_s = (slice * work.flops_per_sample / (calibrated ? hw.trainer_flops : hw.gemm_flops) +
                 3 * slice * work.lookups_per_sample * work.embedding_bytes / hw.memory_bw) /
                share;
  t.straggler_s = t.compute_s * hw.trainer_spread * ExpectedMaxOfNormals(work.trainers);
  // Dense gradients and critical rows travel in one collective.
  t.dense_sync_s = AllReduceSeconds(work.dense_bytes, work.trainers, work.collective, hw);
  t.critical_sync_s =
      AllReduceSeconds(work.dense_bytes + rows.critical * work.sync_row_bytes, work.trainers, work.collective, hw) -
      t.dense_sync_s;
  t.delayed_sync_s = AllReduceSeconds(rows.delayed * work.sync_row_bytes, work.trainers, work.collective, hw);
  // The busier of a trainer's link (its own rows) and the shard hosts'
  // links (every trainer's rows, spread over them).
  auto transfer = [&](double all_rows) {
    if (all_rows <= 0) return 0.0;
    const double own = all_rows / w * work.row_bytes, per_host = all_rows / hosts * work.row_bytes;
    return LinkSeconds(std::max(own, per_host), hw);
  };
  t.fetch_s = transfer(rows.fetched);
  if (hw.host_device_bw > 0) t.fetch_s += rows.fetched / w * work.row_bytes / hw.host_device_bw;
  t.write_back_s = transfer(rows.evictions);
  // The rows' processor time at the busier end (a trainer's partition, its
  // own rows; a shard host, its share of every trainer's), on the share of
  // a core the trainers get: the one a calibrated rate implies against the
  // idle core's, else the topology's.
  const double row_share = !calibrated ? topology_share
                           : hw.gemm_flops > 0 ? std::min(1.0, hw.trainer_flops / hw.gemm_flops)
                                               : 1.0;
  auto service = [&](double all_rows) { return std::max(all_rows / w, all_rows / hosts) * hw.shard_row / row_share; };
  t.shard_fetch_s = service(rows.fetched);
  t.shard_write_back_s = service(rows.evictions);
  return t;
}

Prediction Predict(Mode mode, const Workload& work, const PlanRows& rows, const HardwareProfile& hw) {
  const Terms t = TermsOf(work, rows, hw);
  const double w = std::max<uint32_t>(work.trainers, 1);
  const double move_bytes = (rows.fetched + rows.evictions) / w * work.row_bytes;
  Prediction p;
  p.mode = mode;
  p.batch_samples = work.batch;
  p.compute_s = t.compute_s;
  p.straggler_s = t.straggler_s;
  // The faster trainers wait in the sum for the slowest: the sum ends that
  // much later for all of them.
  const double critical_sync = t.straggler_s + t.dense_sync_s + t.critical_sync_s;
  p.critical_bytes =
      AllReduceBytes(work.dense_bytes + rows.critical * work.sync_row_bytes, work.trainers, work.collective);
  p.background_bytes = AllReduceBytes(rows.delayed * work.sync_row_bytes, work.trainers, work.collective);
  if (FetchOnCriticalPath(mode)) {
    // Barrier b − 1: batch b's fetch waits for b − 1's write-backs, and b
    // waits for its fetch; nothing overlaps compute.
    p.exposed_fetch_s = t.fetch_s + t.write_back_s + t.shard_fetch_s + t.shard_write_back_s;
    p.exposed_sync_s = critical_sync + t.delayed_sync_s;
    p.critical_bytes += move_bytes;
  } else {
    // The fetches, write-backs and delayed sync run behind compute on the
    // same link: the link's busy time bounds the iteration from below.
    const double moves = std::max(t.fetch_s, t.write_back_s);
    const double path = t.compute_s + critical_sync;
    const double busy = t.dense_sync_s + t.critical_sync_s + moves + t.delayed_sync_s;  // the link's work, no wait
    const double excess = std::max(0.0, busy - path);
    const double background = moves + t.delayed_sync_s;
    const double fetch_share = background > 0 ? moves / background : 0.0;
    p.exposed_fetch_s = excess * fetch_share;
    p.exposed_sync_s = critical_sync + excess * (1 - fetch_share);
    p.background_bytes += move_bytes;
  }
  p.iteration_s = p.compute_s + p.exposed_fetch_s + p.exposed_sync_s;
  return p;
}

}  // namespace actorrec::planner
