#include "gpu/shared_device_collective.hpp"

#include <string>

#include "gpu/buffer.hpp"

namespace actorrec::gpu {

class SharedDeviceCollective final : public SharedGroupRank {
 public:
  SharedDeviceCollective(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank, Backend* backend)
      : SharedGroupRank(std::move(group), rank), backend_(backend) {}

  Status AllReduceRankOrder(float* data, size_t n) override {
    SharedMemoryGroup& g = *group_;
    const uint32_t W = g.size();
    if (W == 1) return Status::Ok();
    const std::string what =
        "rank " + std::to_string(rank_) + ": device all-reduce of " + std::to_string(n) + " floats";
    if (Status st = Publish(data, n, what); !st.ok()) return st;
    float* gathered = gathered_.Grow(*backend_, W * n);
    for (uint32_t r = 0; r < W; ++r) backend_->CopyResident(gathered + r * n, g.data_[r], n);
    backend_->Finish();
    if (Status st = g.Arrive(what, nullptr); !st.ok()) return st;
    // Every rank has read every buffer: each overwrites its own with the
    // sum, ordered before its later ops by its stream; the next call's
    // first barrier comes after its Finish, so nobody reads it too early.
    backend_->RankOrderSum(gathered, n, W, data);
    return Status::Ok();
  }

  // Its buffers are its backend's already: the same sum. Another backend
  // than the one it was connected with is refused (its memory is not the
  // one this rank's gathered buffer and copies are on).
  Status AllReduceResident(Backend& backend, float* data, size_t n) override {
    if (&backend != backend_) {
      return Status::InvalidArgument("rank " + std::to_string(rank_) + ": device all-reduce of " + std::to_string(n) +
                                     " floats of another backend (" + backend.name() + ") than the rank's (" +
                                     backend_->name() + ")");
    }
    return AllReduceRankOrder(data, n);
  }

  Status Broadcast(float* data, size_t n, uint32_t root) override {
    SharedMemoryGroup& g = *group_;
    if (g.size() == 1) return Status::Ok();
    const std::string what = "rank " + std::to_string(rank_) + ": device broadcast from rank " + std::to_string(root);
    if (root >= g.size()) return Status::InvalidArgument(what + ": no such rank in a group of " + std::to_string(g.size()));
    if (Status st = Publish(data, n, what); !st.ok()) return st;
    if (rank_ != root) backend_->CopyResident(data, g.data_[root], n);
    backend_->Finish();
    return g.Arrive(what, nullptr);
  }

 private:
  // Step 1: this rank's buffer written, published, every rank arrived with
  // the same n.
  Status Publish(float* data, size_t n, const std::string& what) {
    SharedMemoryGroup& g = *group_;
    backend_->Finish();
    g.data_[rank_] = data;
    g.n_[rank_] = n;
    return g.Arrive(what, [&] { return g.SameCount(rank_, n); });
  }

  Backend* backend_;
  Buffer gathered_;  // W·n floats of backend_'s memory, grown to the largest call
};

Result<std::unique_ptr<Collective>> ConnectSharedDevice(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank,
                                                        Backend* backend) {
  if (!group || rank >= group->size() || backend == nullptr) {
    return Status::InvalidArgument("rank " + std::to_string(rank) + " of a shared-device group of " +
                                   std::to_string(group ? group->size() : 0) +
                                   (backend == nullptr ? " without a backend" : ""));
  }
  return std::unique_ptr<Collective>(std::make_unique<SharedDeviceCollective>(std::move(group), rank, backend));
}

}  // namespace actorrec::gpu
