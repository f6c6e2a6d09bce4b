// What one global batch of a training run did, as the drivers report it.
#pragma once

#include <cstdint>

namespace actorrec::trainer {

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
};

}  // namespace actorrec::trainer
