// The collective of trainers that share one GPU in one process: the
// shared-memory collective's group and rank-order result, on buffers in the
// trainers' device memory (issue 22, part 3; docs/gpu.md "Sums on one
// device").
//
// NCCL refuses two ranks on one device, and the shared-memory collective
// sums host buffers. Here every rank's buffer is in its backend's memory,
// and all the group's backends are on one device of this process (or all
// on the host), so a rank can read another's buffer directly:
//   1. each rank finishes its own work so far (Backend::Finish: its buffer
//      is written), publishes the buffer and waits for the others (the
//      group's barrier, which also checks that every rank passed the same n);
//   2. each rank copies every rank's buffer into its own gathered buffer,
//      rank r at r·n (Backend::CopyResident), finishes, and waits again: no
//      rank overwrites its buffer while another still reads it;
//   3. each rank sums its gathered buffer into its own in rank order
//      (Backend::RankOrderSum: ((x0 + x1) + x2) + …, the kernel of the NCCL
//      collective, gpu/cuda/rank_sum_ops.hpp).
// Every rank computes the same sum from the same floats in the same order:
// the same bits on every rank, equal to the shared-memory, Gloo, TLS and
// NCCL collectives', whatever the timing. Each rank moves W·n floats within
// device memory per call (no PCIe).
//
// Contract: gpu::Collective's (collectives.hpp), with `data` in the rank's
// backend's memory; AllReduceResident is AllReduceRankOrder (for the rank's
// own backend only). The trainers' sync schedulers call it from their own
// threads while the trainers enqueue their next batch: the backend ops it
// uses (CopyResident, RankOrderSum, Finish, Allocate) must allow that
// (CUDA's touch only the compute stream and an event of their own). The group's failure rules are the shared-memory
// group's: a rank that does not arrive within the timeout, or leaves,
// breaks the group for every rank. REQUIRES: the backend outlives the
// collective; every backend of the group works on the same device.
#pragma once

#include <memory>

#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "gpu/collectives.hpp"
#include "gpu/shared_memory_collective.hpp"

namespace actorrec::gpu {

// Rank `rank` of `group`, summing buffers of `backend`'s memory.
// InvalidArgument when rank >= group->size() or backend is null.
Result<std::unique_ptr<Collective>> ConnectSharedDevice(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank,
                                                        Backend* backend);

}  // namespace actorrec::gpu
