// The cost model: per-iteration time of each training mode, predicted from
// the oracle's plan statistics on a sample of the data (rows per batch:
// fetched, synced critical / delayed, written back) and a HardwareProfile.
// docs/planner.md states every equation; this file is their one place.
//
// Steady state of one trainer, all trainers alike (the slices are equal):
//   compute   C = dense GEMMs + row gathers/scatters in memory, at the
//             share of a core the trainer gets on its host (co-located
//             processes share the host's cores: ComputeShare)
//   link      each host has one link, full duplex; a trainer's link carries
//             its fetches in, its write-backs and sync out; a shard's link
//             carries every trainer's fetches out
//   critical  what the next batch waits for: the dense all-reduce, the
//             critical row sync, and (no_cache, static_hot: barrier b − 1)
//             the fetches and write-backs themselves
//   background (lookahead modes) the prefetch, the write-backs and the
//             delayed sync, overlapped with compute but sharing the link
//   wait      the trainers' compute differs batch by batch (co-located
//             processes, caches): the sum starts when the slowest trainer
//             arrives, E[max of W] − mean = C × spread × ExpectedMaxOfNormals(W)
//             (spread: the profile's calibrated trainer_spread; 0: alike)
//   rows      (no_cache, static_hot) the shards' and cache partitions'
//             processor time per row fetched and written back (the
//             profile's shard_row_us), at the trainers' share of a core
//   T = max(C + wait + critical communication, busy time of the busiest link)
// The exposed terms are what T adds to C.
//
// Plain values in, plain values out; no I/O. Thread-safe (pure functions).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "configs/config.hpp"
#include "planner/hardware_profile.hpp"

namespace actorrec::planner {

// The training modes (config::Mode, ARCHITECTURE §8), in the order tables list them.
using config::Mode;
inline constexpr std::array<Mode, 6> kModes = {Mode::kNoCache,    Mode::kStaticHot, Mode::kReplicated,
                                               Mode::kLrpp,       Mode::kLrppDelayed, Mode::kIdeal};
// Whether the mode's fetches wait for the previous batch's write-backs
// (barrier b − 1: the DirectPlanner's no_cache and static_hot).
bool FetchOnCriticalPath(Mode mode);

// How the trainers sum (gpu/collectives.hpp), which sets the bytes a sum of
// n bytes moves per trainer link (each direction):
//   kChain      TLS and Gloo: the rank-order chain, a reduce 0 → … → W−1
//               then a broadcast W−1 → 0 → … → W−2, one after the other,
//               n bytes on every link in each (gpu/chain_schedule.hpp):
//               2 n / bw + 2 (W − 1) latency;
//   kAllGather  NCCL: every rank gathers every rank's n bytes, then sums
//               them in rank order on its GPU: (W − 1) n / bw + (W − 1)
//               latency (a ring all-gather).
enum class Collective { kChain, kAllGather };
// The collective a run's `cluster.collective` gives: "nccl" is the
// all-gather, "auto" too where the trainers have an accelerator
// (host_device_bw > 0), the rest the chain.
Collective CollectiveFor(const std::string& name, const HardwareProfile& hw);

// The share of a core each trainer gets on a host with `cores` cores (0:
// not known, a core each) running `trainers` trainer threads and `others`
// other busy threads (the oracle's, the sampler's): min(1, cores / (trainers
// + others)). Computes at this share of the profile's one-thread rates.
double ComputeShare(double cores, uint32_t trainers, uint32_t others);

// The expected largest of `draws` independent standard normal draws (numeric
// quadrature): 0 for 1, 1/√π ≈ 0.5642 for 2, 3/(2√π) ≈ 0.8463 for 3, 1.4236
// for 8. Twice it is the expected range (largest − smallest).
double ExpectedMaxOfNormals(uint32_t draws);

// The shape of one run, from its config.
struct Workload {
  uint32_t trainers = 1;            // W
  uint32_t shards = 1;              // S
  uint32_t shard_hosts = 1;         // links the shards sit behind (several shards may share a host)
  uint32_t batch = 1;               // global batch B (samples)
  double flops_per_sample = 0;      // dense GEMM FLOPs, forward + backward
  double dense_bytes = 0;           // dense gradient bytes all-reduced per batch
  double lookups_per_sample = 0;    // embedding ids read per sample (all tables)
  double embedding_bytes = 0;       // bytes of one embedding vector (dim × 4)
  double row_bytes = 0;             // bytes of a row's state (vector + optimizer slots): fetch, write-back
  double sync_row_bytes = 0;        // bytes of one row's update in the sync (its gradient; the ids are in the plan)
  Collective collective = Collective::kChain;
  double compute_share = 1;         // of a core, per trainer (ComputeShare of its host); 0 < share <= 1
                                    // (ignored where the profile has a calibrated trainer_flops)
};

// One mode's plan statistics per global batch (PlanStats totals / batches).
struct PlanRows {
  double fetched = 0;    // rows landed in some trainer's cache (W × shared prefetch + private prefetch)
  double critical = 0;   // rows synced before the next batch
  double delayed = 0;    // rows synced in the background
  double evictions = 0;  // rows written back
  double unique = 0;     // distinct rows the batch touches
};

struct Prediction {
  Mode mode = Mode::kLrppDelayed;
  double compute_s = 0;         // C
  double exposed_fetch_s = 0;   // what fetches and write-backs add to C
  double exposed_sync_s = 0;    // what dense and row sync add to C, the wait for the slowest trainer included
  double straggler_s = 0;       // of that, the wait for the slowest trainer (Terms::straggler_s)
  double iteration_s = 0;       // T = C + exposed fetch + exposed sync
  double critical_bytes = 0;    // bytes one trainer moves on the critical path per iteration
  double background_bytes = 0;  // bytes behind compute (prefetch, write-back, delayed sync), one trainer
  double batch_samples = 0;     // B
  double samples_per_s() const { return iteration_s > 0 ? batch_samples / iteration_s : 0.0; }
  // "compute", "fetch" or "sync": the largest of the three terms.
  std::string Dominant() const;
};

// The terms of one iteration, for tests and the simulator to share.
struct Terms {
  double compute_s = 0;         // C: the mean trainer's; trainer_flops where calibrated, else gemm_flops × share
  double straggler_s = 0;       // the slowest of W trainers arrives this much after the mean one
  double dense_sync_s = 0;      // the sum of the dense gradients alone
  double critical_sync_s = 0;   // what the critical rows add to it (one collective: dense + critical)
  double delayed_sync_s = 0;    // the sum of the delayed rows (a collective of its own)
  double fetch_s = 0;           // fetches landing in one trainer: its link, the shards' links, host->device
  double write_back_s = 0;      // write-backs leaving one trainer: its link, the shards' links
  // The processor time of the rows in the shards and the cache partitions
  // (the profile's shard_row, at the core share the trainers compute at):
  // on the critical path where fetches are (FetchOnCriticalPath), behind
  // compute on the same cores elsewhere (inside a calibrated trainer rate).
  double shard_fetch_s = 0;       // the busiest end's rows of one batch's fetch
  double shard_write_back_s = 0;  // the same for its write-backs
};
Terms TermsOf(const Workload& work, const PlanRows& rows, const HardwareProfile& hw);

// Seconds to move `bytes` over one link, one message: bytes / bw + latency
// (0 for no bytes).
double LinkSeconds(double bytes, const HardwareProfile& hw);
// A sum of `bytes` over W ranks, each on its own link, by `collective`
// (see Collective); 0 for W = 1 or no bytes.
double AllReduceSeconds(double bytes, uint32_t trainers, Collective collective, const HardwareProfile& hw);
// The bytes one rank sends (and receives) in that sum: 2 × bytes for the
// chain, (W − 1) × bytes for the all-gather; 0 for W = 1.
double AllReduceBytes(double bytes, uint32_t trainers, Collective collective);

Prediction Predict(Mode mode, const Workload& work, const PlanRows& rows, const HardwareProfile& hw);

}  // namespace actorrec::planner
