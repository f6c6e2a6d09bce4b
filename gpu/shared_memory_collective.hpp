// Collectives for trainer ranks that are threads of one process: each rank
// publishes its buffer, the ranks sum disjoint slices of the elements in
// rank order straight from each other's buffers, and copy the result back.
// No sockets, no copies through a transport: where Gloo's TCP loopback
// all-reduce of DLRM's dense gradient (1.9 MB, two ranks) took 6–7 ms per
// batch, this takes about what a memory loop over the buffers does.
//
// The sums are the same as GlooCollective's, bit for bit:
// ((x0[i] + x1[i]) + x2[i]) + … in exactly that order (collectives.hpp), so
// a one-process run equals a cluster run over Gloo (tests/cluster).
//
// Every call is two barriers (published, summed). A barrier waits at most
// `timeout`; a rank that does not arrive in time (its thread stuck) breaks
// the group: that call and every later one, on every rank, return
// Unavailable naming the call, as a broken Gloo group does. A rank whose
// collective is destroyed (its actor stopped) breaks it at once, as a Gloo
// peer's closed socket does: the others do not wait out the timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "gpu/collectives.hpp"

namespace actorrec::gpu {

// What the ranks of one group share. Make one per run (per set of ranks),
// give it to every rank's ConnectSharedMemory.
class SharedMemoryGroup {
 public:
  SharedMemoryGroup(uint32_t size, std::chrono::milliseconds timeout);
  uint32_t size() const { return size_; }

 private:
  friend class SharedGroupRank;
  friend class SharedMemoryCollective;
  friend class SharedDeviceCollective;  // the same group over device buffers
  // Waits until all ranks arrive (the last one runs `last` first, under the
  // lock). Unavailable naming `what` on a timeout or a broken group.
  Status Arrive(const std::string& what, const std::function<Status()>& last);
  // Breaks the group (unless it is already) and wakes every waiting rank.
  void Break(const std::string& why);
  // InvalidArgument naming the ranks when a rank published another n than
  // `caller`'s. For an Arrive's `last` (under the lock).
  Status SameCount(uint32_t caller, size_t n) const;

  const uint32_t size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  std::string broken_;  // why, once broken

  // Published for the current call, per rank.
  std::vector<float*> data_;
  std::vector<size_t> n_;
  std::vector<float> sum_;
};

// What every collective over a SharedMemoryGroup shares (host buffers:
// shared_memory_collective.cpp; device buffers: shared_device_collective):
// its rank and group, the barrier, and breaking the group when it leaves.
class SharedGroupRank : public Collective {
 public:
  ~SharedGroupRank() override;
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return group_->size(); }
  Status Barrier() override;

 protected:
  SharedGroupRank(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank) : group_(std::move(group)), rank_(rank) {}

  const std::shared_ptr<SharedMemoryGroup> group_;
  const uint32_t rank_;
};

// Rank `rank` of `group`. InvalidArgument when rank >= group->size().
Result<std::unique_ptr<Collective>> ConnectSharedMemory(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank);

}  // namespace actorrec::gpu
