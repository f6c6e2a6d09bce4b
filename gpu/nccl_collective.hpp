// The collective between GPUs: NCCL, behind the Collective interface, with
// the rank-order result of collectives.hpp (issue 22). Declared where plain
// g++ code can include it (no CUDA or NCCL header): gpu/cuda/
// nccl_collective.cpp in a build with NCCL, gpu/nccl_collective_none.cpp
// (NotSupported) in one without.
//
// NCCL's own all-reduce sums in an order that depends on the ring or tree it
// builds and on an element's chunk, so it would break the bitwise promise.
// Instead every AllReduceRankOrder is an all-gather of each rank's n floats
// (rank r's at r·n, the order NCCL guarantees) followed by one kernel on
// each GPU that sums element i as ((x0[i] + x1[i]) + …) + x_{W−1}[i]
// (gpu/cuda/rank_sum_ops.hpp, host-tested against the CPU's rank-order sum):
// every rank computes the same bits, equal to the shared-memory, Gloo and
// TLS collectives'. It moves W·n floats into each GPU instead of a ring's
// 2n, which is the price of that order.
//
// One communicator per trainer rank, on that rank's device; a 1-rank
// communicator is a real one (it runs the same copies and kernel). The
// group's ncclUniqueId is made by rank 0 and travels through the rendezvous
// store (gpu/nccl_rendezvous.hpp); in a cluster that is the coordinator's
// rendezvous actor, as for the TLS and Gloo collectives.
//
// Data: the Collective contract takes host pointers (the trainers' gradients
// are host vectors today): each call copies them into pinned staging, up to
// the device, and back. Buffers grow to the largest call and are reused.
//
// Errors: the failure contract of collectives.hpp. The communicator is
// non-blocking, and every wait for it (the set-up, each operation) polls
// NCCL's asynchronous error and the stream, bounded by `timeout`: a dead or
// stuck peer, an NCCL or CUDA error aborts the communicator and breaks the
// collective with a status naming the rank, the device, the operation and
// NCCL's or CUDA's message. NCCL's sockets are not authenticated (as Gloo's):
// a trusted network only (docs/cluster.md).
//
// Thread-safety: one thread at a time, as every Collective; each call makes
// its device current on the calling thread.
#pragma once

#include <memory>
#include <vector>

#include "base/status.hpp"
#include "gpu/collectives.hpp"
#include "gpu/gloo_collective.hpp"
#include "gpu/nccl_rendezvous.hpp"

namespace actorrec::gpu {

// A group's rank, size, timeout, store and prefix are a Gloo group's
// (GlooOptions: one description of a group serves every collective; the
// address and chunk size are not used: NCCL finds its own). NCCL adds:
struct NcclOptions : GlooOptions {
  int device = 0;  // the CUDA device of this rank (its trainer's backend's)
};

// Ok when this build has NCCL; else NotSupported saying so and how to get it.
Status NcclSupport();

// A fresh ncclUniqueId (ncclGetUniqueId: no device needed, it opens rank
// 0's bootstrap listener in this process). NotSupported without NCCL.
Result<NcclUniqueIdBytes> MakeNcclUniqueId();

// Connects rank `options.rank` (blocks until every rank has joined or the
// timeout passes): rank 0 makes the id, the others get it through
// options.store (size 1 needs no store). NotSupported without NCCL;
// Unavailable naming the rank, device and NCCL's or CUDA's reason.
// ConnectNcclRanks with one rank.
Result<std::unique_ptr<Collective>> ConnectNccl(const NcclOptions& options);

// Several ranks of one process, each on a device of its own, connected
// together, as NCCL requires of one thread creating several ranks: in one
// group (ncclGroupStart; per rank cudaSetDevice and ncclCommInitRankConfig;
// ncclGroupEnd), then every communicator waited for. `group` gives the
// size, timeout, store and prefix (its rank and device are not used). The
// id is made here when `ranks` is the whole group (no store needed), else
// shared through the store by the lowest of `ranks` (made there when that
// is rank 0). One collective per entry of `ranks`, in that order; each is
// then used by one thread at a time, as every Collective. InvalidArgument
// when CheckProcessRanks refuses `ranks`; NotSupported without NCCL;
// Unavailable naming the ranks, their devices and NCCL's or CUDA's reason.
Result<std::vector<std::unique_ptr<Collective>>> ConnectNcclRanks(const NcclOptions& group,
                                                                  const std::vector<RankDevice>& ranks);

}  // namespace actorrec::gpu
