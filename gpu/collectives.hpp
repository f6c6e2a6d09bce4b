// Collectives over the W trainers of one run, with a reduction order that
// does not depend on where an element sits in a buffer (ARCHITECTURE §5).
//
// A ring all-reduce adds the W contributions of chunk c starting at rank
// c+1, so an element's sum depends on its offset, and float addition is not
// associative. Shared-row sync buffers change layout from batch to batch and
// from cache mode to cache mode, so every element is instead summed in rank
// order, ((x0 + x1) + x2) + … + x_{W−1}: the same bits on every rank, in
// every mode, and the same as a sequential loop over the ranks.
//
// Contract shared by every call: all W ranks make the same sequence of calls
// with the same arguments (n, root); a call blocks until this rank's part is
// done. A Collective is used by one thread at a time. After a failure (a
// timeout, a dead peer) the collective is broken: the peers' state is
// unknown, so every later call returns the same Unavailable status and the
// caller recovers by reconnecting (the supervisor's job).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.hpp"

namespace actorrec::gpu {

class Backend;

class Collective {
 public:
  Collective() = default;
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;
  virtual ~Collective() = default;

  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;

  // In place: every rank ends with data[i] = ((x0[i] + x1[i]) + x2[i]) + … +
  // x_{W−1}[i], computed in exactly that order, where x_r is rank r's input.
  // n may change from call to call and may be 0. W == 1 leaves data as is.
  virtual Status AllReduceRankOrder(float* data, size_t n) = 0;

  // AllReduceRankOrder (the same result, bit for bit) on `data` in
  // `backend`'s memory: a trainer's packed gradients where they were
  // computed (docs/gpu.md "Sums in the backend's memory"). Every rank
  // passes its own backend. The default serves collectives that sum host
  // buffers (shared memory, TLS, Gloo) unchanged: on a host backend it is
  // AllReduceRankOrder on `data` itself; on a device it downloads `data`
  // into host scratch, sums that and uploads the sum. Collectives that read
  // device memory (shared-device, NCCL) override it and move nothing
  // through the host. Returns with the sum in `data` as the backend's later
  // ops see it.
  virtual Status AllReduceResident(Backend& backend, float* data, size_t n);

  // Every rank ends with root's data[0, n).
  virtual Status Broadcast(float* data, size_t n, uint32_t root) = 0;

  // Returns once every rank has entered the barrier.
  virtual Status Barrier() = 0;

 private:
  std::vector<float> host_scratch_;  // AllReduceResident's default, grown to the largest call
};

// The collective of a group of one (W == 1): every call is the identity.
std::unique_ptr<Collective> MakeSoloCollective();

}  // namespace actorrec::gpu
