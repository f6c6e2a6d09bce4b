// How the trainer ranks of a cluster decide on NCCL and meet for it,
// through the rendezvous store their collective already uses (the
// coordinator's rendezvous actor in a cluster, actors/run/rendezvous.hpp;
// any gloo::rendezvous::Store in tests). Plain logic, no CUDA or NCCL
// header: a build without NCCL has it too, and the host tests run it.
//
//   agreement (cluster.collective = "auto"): each rank stores whether it can
//     join an NCCL group (NcclReadiness) under "<prefix>/nccl-ready/<rank>",
//     then reads all W answers in rank order; every rank derives the same
//     decision from the same W values: NCCL when all are ready and no two
//     name the same GPU (members sharing a host both on its device 0), else
//     the first rank that is not, or that repeats an earlier rank's GPU,
//     with its reason.
//   unique id: rank 0 makes the group's ncclUniqueId (its bootstrap
//     listener lives in rank 0's process) and stores its 128 bytes under
//     "<prefix>/nccl-id"; every other rank waits for them. A value of
//     another size is refused naming the key, not passed to NCCL.
//
// Every wait is bounded by `timeout`; a store that does not answer in time
// (it throws, as Gloo's stores do) becomes Unavailable naming the key.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "gpu/device_assignment.hpp"

namespace gloo::rendezvous {
class Store;
}

namespace actorrec::gpu {

// NCCL_UNIQUE_ID_BYTES (nccl.h; checked by a static_assert where NCCL is
// built).
inline constexpr size_t kNcclUniqueIdBytes = 128;
using NcclUniqueIdBytes = std::array<char, kNcclUniqueIdBytes>;

// Whether one trainer rank can join an NCCL group, and why not.
struct NcclReadiness {
  bool ready = false;
  std::string why_not;  // e.g. "this build has no NCCL", "its trainers run the CPU backend (…)"
  // A ready rank's GPU (DeviceUuid: the same name in every process; empty:
  // unknown) and its ordinal in the rank's process, for the agreement.
  std::string gpu;
  int device = 0;
};

// A rank is ready when the build has NCCL (`nccl_support` ok), its trainer
// runs the CUDA backend, and every trainer of its process
// (`process_ranks`: each rank it hosts and that rank's device,
// gpu/device_assignment.hpp) is on a device of its own: NCCL refuses two
// ranks on one GPU. `backend_line` names the backend and why it was chosen
// (BackendChoice::Line), for the reason.
NcclReadiness NcclReadinessOf(const Status& nccl_support, bool backend_cuda, const std::string& backend_line,
                              const std::vector<RankDevice>& process_ranks);

// The ranks one process connects together (ConnectNccl, ConnectNcclRanks):
// at least one, each in [0, size) and listed once, each on a device of its
// own. InvalidArgument naming the rank or the device.
Status CheckProcessRanks(uint32_t size, const std::vector<RankDevice>& ranks);

// cluster.collective = "nccl" asked for where this process cannot join:
// InvalidArgument naming the key, the config file and the reason. Ok when
// ready.
Status CheckNcclRequest(const NcclReadiness& readiness, const std::string& config_path);

// The group's decision for cluster.collective = "auto" (see above).
struct NcclAgreement {
  bool all_ready = false;
  std::string why_not;  // "rank R: <reason>" of the first rank not ready
};
Result<NcclAgreement> AgreeOnNccl(gloo::rendezvous::Store& store, const std::string& prefix, uint32_t rank,
                                  uint32_t size, const NcclReadiness& mine, std::chrono::milliseconds timeout);

// Rank 0: make_id(), stored; other ranks: the stored id (see above).
Result<NcclUniqueIdBytes> ShareNcclUniqueId(gloo::rendezvous::Store& store, const std::string& prefix,
                                            uint32_t rank, const std::function<Result<NcclUniqueIdBytes>()>& make_id,
                                            std::chrono::milliseconds timeout);

}  // namespace actorrec::gpu
