// NcclCollective: the rank-order all-reduce between GPUs as an all-gather
// plus a rank-order sum kernel (gpu/nccl_collective.hpp says why and what
// it promises). Built only when meson finds NCCL beside CUDA.
#include "gpu/nccl_collective.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/cuda/rank_sum_kernels.cuh"

namespace actorrec::gpu {
namespace {

static_assert(NCCL_UNIQUE_ID_BYTES == kNcclUniqueIdBytes, "the rendezvous carries ncclUniqueId's bytes");

using Clock = std::chrono::steady_clock;

// A failed NCCL or CUDA call, or a timeout, inside a set-up or an operation.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string NcclText(ncclResult_t r, ncclComm_t comm) {
  std::string s = ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') s.append(" (").append(last).append(")");
  return s;
}

void CheckCuda(cudaError_t e, const std::string& call) {
  if (e != cudaSuccess) throw Failure(call + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// Between polls: spin briefly (an operation of a small buffer is done in
// microseconds), then sleep so that a long wait leaves the core alone.
void Pause(int polls) {
  if (polls < 200) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Throws when the communicator reports an asynchronous error (a peer gone,
// a network error); true while it still has work in progress.
bool InProgress(ncclComm_t comm, const std::string& what) {
  ncclResult_t state = ncclSuccess;
  if (ncclResult_t r = ncclCommGetAsyncError(comm, &state); r != ncclSuccess) {
    throw Failure(what + ": ncclCommGetAsyncError: " + NcclText(r, comm));
  }
  if (state == ncclInProgress) return true;
  if (state != ncclSuccess) throw Failure(what + ": " + NcclText(state, comm));
  return false;
}

void CheckDeadline(Clock::time_point deadline, std::chrono::milliseconds timeout, const std::string& what) {
  if (Clock::now() > deadline) {
    throw Failure(what + ": not done within " + std::to_string(timeout.count()) + " ms (a peer stuck or gone)");
  }
}

// A non-blocking communicator's call returned ncclInProgress: waits until
// it is enqueued (or the set-up done).
void WaitComm(ncclComm_t comm, Clock::time_point deadline, std::chrono::milliseconds timeout, const std::string& what) {
  for (int polls = 0; InProgress(comm, what); ++polls) {
    CheckDeadline(deadline, timeout, what);
    Pause(polls);
  }
}

void CheckNccl(ncclResult_t r, ncclComm_t comm, Clock::time_point deadline, std::chrono::milliseconds timeout,
               const std::string& call) {
  if (r == ncclInProgress) return WaitComm(comm, deadline, timeout, call);
  if (r != ncclSuccess) throw Failure(call + ": " + NcclText(r, comm));
}

std::string Who(uint32_t rank, uint32_t size, int device) {
  return "nccl rank " + std::to_string(rank) + " of " + std::to_string(size) + " (device " + std::to_string(device) +
         ")";
}

class NcclCollective final : public Collective {
 public:
  NcclCollective(ncclComm_t comm, cudaStream_t stream, int device, uint32_t rank, uint32_t size,
                 std::chrono::milliseconds timeout)
      : comm_(comm), stream_(stream), device_(device), rank_(rank), size_(size), timeout_(timeout) {}

  // Abort, not ncclCommDestroy: destroying waits for the peers, which may
  // be gone (a stopped run); every operation here has completed already.
  ~NcclCollective() override {
    cudaSetDevice(device_);
    if (comm_ != nullptr) ncclCommAbort(comm_);
    cudaFree(send_);
    cudaFree(gathered_);
    cudaFreeHost(host_);
    cudaStreamDestroy(stream_);
  }

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }

  Status AllReduceRankOrder(float* data, size_t n) override {
    return Run("all-reduce of " + std::to_string(n) + " floats", [&] {
      if (n == 0) return;
      Reserve(n);
      const size_t bytes = n * sizeof(float);
      std::memcpy(host_, data, bytes);
      CheckCuda(cudaMemcpyAsync(send_, host_, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (host to device)");
      // Rank r's n floats land at gathered_ + r·n on every rank.
      Nccl(ncclAllGather(send_, gathered_, n, ncclFloat, comm_, stream_), "ncclAllGather");
      CheckCuda(cuda::LaunchRankOrderSum(gathered_, n, size_, send_, stream_), "LaunchRankOrderSum");
      CheckCuda(cudaMemcpyAsync(host_, send_, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (device to host)");
      WaitStream("the all-reduce's stream");
      std::memcpy(data, host_, bytes);
    });
  }

  // Device pointers: the backend's work so far finished (its buffer
  // written), then the all-gather reads `data` where it is and the kernel
  // sums into it, with no host staging. The backend's later ops run after
  // this returns, when the stream is done. Host memory: AllReduceRankOrder.
  Status AllReduceResident(Backend& backend, float* data, size_t n) override {
    if (!backend.device_memory()) return AllReduceRankOrder(data, n);
    return Run("all-reduce of " + std::to_string(n) + " floats of device memory", [&] {
      if (n == 0) return;
      Reserve(n);
      backend.Finish();
      Nccl(ncclAllGather(data, gathered_, n, ncclFloat, comm_, stream_), "ncclAllGather");
      CheckCuda(cuda::LaunchRankOrderSum(gathered_, n, size_, data, stream_), "LaunchRankOrderSum");
      WaitStream("the all-reduce's stream");
    });
  }

  Status Broadcast(float* data, size_t n, uint32_t root) override {
    if (root >= size_) {
      return Status::InvalidArgument("broadcast root " + std::to_string(root) + " >= group size " +
                                     std::to_string(size_));
    }
    return Run("broadcast of " + std::to_string(n) + " floats from rank " + std::to_string(root), [&] {
      if (n == 0) return;
      Reserve(n);
      const size_t bytes = n * sizeof(float);
      if (rank_ == root) {
        std::memcpy(host_, data, bytes);
        CheckCuda(cudaMemcpyAsync(send_, host_, bytes, cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync (host to device)");
      }
      Nccl(ncclBroadcast(send_, send_, n, ncclFloat, static_cast<int>(root), comm_, stream_), "ncclBroadcast");
      if (rank_ != root) {
        CheckCuda(cudaMemcpyAsync(host_, send_, bytes, cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync (device to host)");
      }
      WaitStream("the broadcast's stream");
      if (rank_ != root) std::memcpy(data, host_, bytes);
    });
  }

  // A one-float all-reduce: no rank leaves before every rank's float arrived.
  Status Barrier() override {
    float one = 0.0f;
    return AllReduceRankOrder(&one, 1);
  }

 private:
  // Numbers the operation, runs it on this collective's device, and turns a
  // failure into the broken state (the communicator aborted).
  template <class F>
  Status Run(const std::string& what, F&& body) {
    if (!broken_.ok()) return broken_;
    const uint64_t op = next_op_++;
    deadline_ = Clock::now() + timeout_;
    try {
      CheckCuda(cudaSetDevice(device_), "cudaSetDevice");
      body();
      return Status::Ok();
    } catch (const std::exception& e) {
      broken_ = Status::Unavailable(Who(rank_, size_, device_) + ": " + what + " failed (op " + std::to_string(op) +
                                    "): " + e.what());
    }
    // The peers' state is unknown: nothing more goes through this
    // communicator, and nothing of it keeps waiting.
    ncclCommAbort(comm_);
    comm_ = nullptr;
    return broken_;
  }

  void Nccl(ncclResult_t r, const std::string& call) { CheckNccl(r, comm_, deadline_, timeout_, call); }

  // Waits for the stream, watching the communicator for a peer's failure.
  void WaitStream(const std::string& what) {
    for (int polls = 0;; ++polls) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) CheckCuda(e, what + ": cudaStreamQuery");
      InProgress(comm_, what);
      CheckDeadline(deadline_, timeout_, what);
      Pause(polls);
    }
  }

  // Buffers for n floats (W·n gathered), grown by half again at least; all
  // earlier work has completed, so the old ones can go.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    const size_t grown = std::max(n, capacity_ + capacity_ / 2);
    CheckCuda(cudaFree(send_), "cudaFree");
    CheckCuda(cudaFree(gathered_), "cudaFree");
    CheckCuda(cudaFreeHost(host_), "cudaFreeHost");
    send_ = gathered_ = host_ = nullptr;
    capacity_ = 0;
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&send_), grown * sizeof(float)), "cudaMalloc (send buffer)");
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&gathered_), grown * size_ * sizeof(float)),
              "cudaMalloc (gathered buffer of " + std::to_string(size_) + " ranks)");
    CheckCuda(cudaHostAlloc(reinterpret_cast<void**>(&host_), grown * sizeof(float), cudaHostAllocDefault),
              "cudaHostAlloc (staging buffer)");
    capacity_ = grown;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  const int device_;
  const uint32_t rank_, size_;
  const std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;
  uint64_t next_op_ = 0;
  Status broken_;
  size_t capacity_ = 0;        // floats of send_ and host_; gathered_ holds size_ times as many
  float* send_ = nullptr;      // device: this rank's input, then the sum
  float* gathered_ = nullptr;  // device: every rank's input, rank r's at r·n
  float* host_ = nullptr;      // pinned staging
};

}  // namespace

Status NcclSupport() { return Status::Ok(); }

Result<NcclUniqueIdBytes> MakeNcclUniqueId() {
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
    return Status::Unavailable("ncclGetUniqueId: " + NcclText(r, nullptr));
  }
  NcclUniqueIdBytes bytes;
  std::memcpy(bytes.data(), id.internal, kNcclUniqueIdBytes);
  return bytes;
}

Result<std::unique_ptr<Collective>> ConnectNccl(const NcclOptions& options) {
  auto made = ConnectNcclRanks(options, {{options.rank, options.device}});
  if (!made.ok()) return made.status();
  return std::move((*made)[0]);
}

Result<std::vector<std::unique_ptr<Collective>>> ConnectNcclRanks(const NcclOptions& group,
                                                                  const std::vector<RankDevice>& ranks) {
  if (Status st = CheckProcessRanks(group.size, ranks); !st.ok()) return st;
  if (group.timeout.count() <= 0) return Status::InvalidArgument("nccl: timeout must be positive");
  const bool whole_group = ranks.size() == group.size;
  if (!whole_group && !group.store) return Status::InvalidArgument("nccl: no rendezvous store");
  if (!whole_group && group.prefix.empty()) {
    return Status::InvalidArgument("nccl: empty store prefix (it must be unique per run)");
  }
  std::string who;
  uint32_t lowest = ranks[0].rank;
  for (const RankDevice& r : ranks) {
    who += (who.empty() ? "" : ", ") + Who(r.rank, group.size, r.device);
    lowest = std::min(lowest, r.rank);
  }
  auto id = whole_group ? MakeNcclUniqueId()
                        : ShareNcclUniqueId(*group.store, group.prefix, lowest, MakeNcclUniqueId, group.timeout);
  if (!id.ok()) return Status::Unavailable(who + ": " + id.status().message());

  const Clock::time_point deadline = Clock::now() + group.timeout;
  const size_t k = ranks.size();
  std::vector<cudaStream_t> streams(k, nullptr);
  std::vector<ncclComm_t> comms(k, nullptr);
  bool in_group = false;
  try {
    for (size_t i = 0; i < k; ++i) {
      CheckCuda(cudaSetDevice(ranks[i].device), "cudaSetDevice (device " + std::to_string(ranks[i].device) + ")");
      CheckCuda(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    }
    ncclUniqueId uid;
    std::memcpy(uid.internal, id->data(), kNcclUniqueIdBytes);
    // Non-blocking: every wait on a communicator is ours, and bounded.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    // One group: NCCL creates several ranks of one thread only together
    // (each alone would wait for the others, which this thread has not
    // created yet). One rank needs no group, and gets none.
    if (k > 1) {
      if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) throw Failure("ncclGroupStart: " + NcclText(r, nullptr));
      in_group = true;
    }
    for (size_t i = 0; i < k; ++i) {
      CheckCuda(cudaSetDevice(ranks[i].device), "cudaSetDevice (device " + std::to_string(ranks[i].device) + ")");
      const ncclResult_t r = ncclCommInitRankConfig(&comms[i], static_cast<int>(group.size), uid,
                                                    static_cast<int>(ranks[i].rank), &config);
      if (r != ncclSuccess && r != ncclInProgress) {
        throw Failure("ncclCommInitRankConfig (rank " + std::to_string(ranks[i].rank) + "): " + NcclText(r, comms[i]));
      }
    }
    if (in_group) {
      in_group = false;
      const ncclResult_t r = ncclGroupEnd();
      if (r != ncclSuccess && r != ncclInProgress) throw Failure("ncclGroupEnd: " + NcclText(r, nullptr));
    }
    for (size_t i = 0; i < k; ++i) {
      if (comms[i] == nullptr) throw Failure("ncclCommInitRankConfig (rank " + std::to_string(ranks[i].rank) + "): no communicator");
      WaitComm(comms[i], deadline, group.timeout, "ncclCommInitRankConfig (rank " + std::to_string(ranks[i].rank) + ")");
    }
  } catch (const std::exception& e) {
    if (in_group) ncclGroupEnd();
    for (size_t i = 0; i < k; ++i) {
      cudaSetDevice(ranks[i].device);
      if (comms[i] != nullptr) ncclCommAbort(comms[i]);
      if (streams[i] != nullptr) cudaStreamDestroy(streams[i]);
    }
    return Status::Unavailable(who + ": " + e.what());
  }
  std::vector<std::unique_ptr<Collective>> made;
  for (size_t i = 0; i < k; ++i) {
    made.push_back(std::make_unique<NcclCollective>(comms[i], streams[i], ranks[i].device, ranks[i].rank, group.size,
                                                    group.timeout));
  }
  return made;
}

}  // namespace actorrec::gpu
