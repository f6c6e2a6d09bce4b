// What one global batch of a training run did, as the drivers report it: the
// training loop prints and logs it, and the inspector's board shows it.
#pragma once

#include <cstdint>
#include <vector>

namespace actorrec::trainer {

// One trainer's share of a batch, from its plan and its own clock (the
// pipeline's trainers report it; the lockstep driver leaves it empty).
struct TrainerFigures {
  uint64_t rows = 0;             // distinct cache slots its slice reads
  uint64_t read_misses = 0;      // of those, rows fetched for this batch (the partition's misses)
  uint64_t fetched = 0;          // rows it fetched: shared (every trainer fetches them) + private misses
  uint64_t private_misses = 0;
  uint64_t private_rows = 0;     // rows it updates alone, without sync
  uint64_t critical = 0, delayed = 0;  // shared rows synced before b+1 / in the background
  uint64_t evictions = 0;        // slots freed after the batch
  uint64_t written = 0;          // of those, rows it writes back to the shards
  uint64_t sync_floats = 0;      // floats it sent to its scheduler (dense + critical + delayed)
  uint32_t occupancy = 0;        // slots of its cache held while the batch ran
  uint32_t lookahead = 0;        // the plan's L
  // Seconds: waiting for rows after it could otherwise start, forward,
  // backward, the dense + critical sync (exposed: the next batch waits for
  // it), the part of that spent behind the previous delayed sync, applying
  // updates, and the delayed sync from its gradients sent until the trainer
  // applied their sum (hidden behind the next batch's compute).
  double wait_rows_s = 0, forward_s = 0, backward_s = 0, critical_sync_s = 0, exposed_delayed_s = 0, apply_s = 0,
         delayed_sync_s = 0;
  // The compute stream's waits of the batch (gpu::StreamWaits).
  double stream_wait_rows_s = 0, stream_wait_sync_s = 0;
};

// What one global batch did.
struct StepReport {
  uint32_t epoch = 0;
  uint64_t batch = 0;        // global batch number in the epoch
  uint64_t samples = 0;
  double loss_sum = 0.0;     // Σ of the batch's BCE losses
  uint64_t unique_rows = 0;  // distinct (t, r) the batch touches (all updated)
  uint64_t missed_rows = 0;  // of those, not in any cache: fetched from shards
  uint64_t fetched_rows = 0;   // rows moved shard → trainer (a shared miss counts W times)
  uint64_t written_rows = 0;   // rows moved trainer → shard (write-backs, or gradients in direct modes)
  uint64_t synced_critical = 0;  // rows all-reduced before the next batch
  uint64_t synced_delayed = 0;   // rows all-reduced in the background
  uint64_t private_rows = 0;     // rows updated by one trainer without sync
  // Wall time of the phases (seconds). forward_s includes pooling the rows
  // by slot, backward_s turning the pooled gradient into row gradients. In
  // the pipeline (PipelineRun) the slowest trainer's: fetch_s is the time
  // it waited for rows after it could otherwise start, dense_sync_s the
  // dense + critical sync (one collective),
  // exposed_delayed_s the part of it spent waiting behind the previous
  // batch's delayed sync, optimizer_s applying updates; sparse_sync_s and
  // write_back_s are 0 there (in the background). In lockstep every phase
  // runs alone and exposed_delayed_s is 0.
  double fetch_s = 0, forward_s = 0, backward_s = 0, dense_sync_s = 0, sparse_sync_s = 0, write_back_s = 0;
  double exposed_delayed_s = 0, optimizer_s = 0;
  // The compute stream's waits (gpu::StreamWaits), the slowest trainer's: for
  // rows and for sync. waits_on_device: measured by the device's clock
  // (CUDA events); else the host's, equal to fetch_s and dense_sync_s.
  double stream_wait_rows_s = 0, stream_wait_sync_s = 0;
  bool waits_on_device = false;
  // Per trainer rank, in the pipeline; empty in lockstep.
  std::vector<TrainerFigures> trainers;
};

// The sums of a run's StepReports (their counts and phase times): what the
// summary of `actorrec train` and the inspector's board report per batch.
struct StepTotals {
  uint64_t batches = 0, samples = 0;
  double loss_sum = 0;
  uint64_t unique = 0, missed = 0, fetched = 0, written = 0, critical = 0, delayed = 0, private_rows = 0;
  double fetch_s = 0, forward_s = 0, backward_s = 0, dense_sync_s = 0, sparse_sync_s = 0, write_back_s = 0;
  double exposed_delayed_s = 0, optimizer_s = 0;
  double stream_wait_rows_s = 0, stream_wait_sync_s = 0;
  bool waits_on_device = false;  // every batch's waits were the device's
  void Add(const StepReport& r) {
    ++batches;
    samples += r.samples;
    loss_sum += r.loss_sum;
    unique += r.unique_rows;
    missed += r.missed_rows;
    fetched += r.fetched_rows;
    written += r.written_rows;
    critical += r.synced_critical;
    delayed += r.synced_delayed;
    private_rows += r.private_rows;
    fetch_s += r.fetch_s;
    forward_s += r.forward_s;
    backward_s += r.backward_s;
    dense_sync_s += r.dense_sync_s;
    sparse_sync_s += r.sparse_sync_s;
    write_back_s += r.write_back_s;
    exposed_delayed_s += r.exposed_delayed_s;
    optimizer_s += r.optimizer_s;
    stream_wait_rows_s += r.stream_wait_rows_s;
    stream_wait_sync_s += r.stream_wait_sync_s;
    waits_on_device = (batches == 1 || waits_on_device) && r.waits_on_device;
  }
};

}  // namespace actorrec::trainer
