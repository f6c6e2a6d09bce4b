// The collectives of a process's trainer ranks, made together and handed
// out one by one. NCCL wants the communicators of one process's ranks
// created in one group call (gpu/nccl_collective.hpp, ConnectNcclRanks),
// while each rank's sync scheduler connects from its own thread: the first
// rank to ask makes them all, the others wait for it and take their own.
//
// Thread-safety: Take may be called from any thread, once per rank.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.hpp"
#include "gpu/collectives.hpp"

namespace actorrec::gpu {

class ProcessRanks {
 public:
  // Makes every rank's collective, one per entry of the ranks given to the
  // constructor and in that order (blocking until the whole group has
  // joined, in every process).
  using Connect = std::function<Result<std::vector<std::unique_ptr<Collective>>>()>;

  ProcessRanks(std::vector<uint32_t> ranks, Connect connect);
  ProcessRanks(const ProcessRanks&) = delete;
  ProcessRanks& operator=(const ProcessRanks&) = delete;

  // Rank `rank`'s collective. The first call runs `connect`; its failure is
  // every rank's (the same status). InvalidArgument for a rank that is not
  // this process's or was taken already.
  Result<std::unique_ptr<Collective>> Take(uint32_t rank);

 private:
  const std::vector<uint32_t> ranks_;
  Connect connect_;
  std::mutex mu_;
  bool made_ = false;                                            // GUARDED_BY(mu_)
  Status failed_;                                                // GUARDED_BY(mu_)
  std::map<uint32_t, std::unique_ptr<Collective>> untaken_;      // GUARDED_BY(mu_)
};

}  // namespace actorrec::gpu
