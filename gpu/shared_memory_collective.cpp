#include "gpu/shared_memory_collective.hpp"

#include <algorithm>
#include <functional>

namespace actorrec::gpu {

SharedMemoryGroup::SharedMemoryGroup(uint32_t size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout), data_(size, nullptr), n_(size, 0) {}

Status SharedMemoryGroup::Arrive(const std::string& what, const std::function<Status()>& last) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!broken_.empty()) return Status::Unavailable(broken_);
  const uint64_t generation = generation_;
  if (++arrived_ == size_) {
    if (Status st = last ? last() : Status::Ok(); !st.ok()) {
      broken_ = what + ": " + st.message();
      cv_.notify_all();
      return Status::Unavailable(broken_);
    }
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return Status::Ok();
  }
  cv_.wait_for(lock, timeout_, [&] { return generation_ != generation || !broken_.empty(); });
  // Released first: a rank that left after this barrier let everyone through
  // does not fail it.
  if (generation_ != generation) return Status::Ok();
  if (!broken_.empty()) return Status::Unavailable(broken_);
  broken_ = what + ": not every rank arrived within " + std::to_string(timeout_.count()) + " ms";
  cv_.notify_all();
  return Status::Unavailable(broken_);
}

void SharedMemoryGroup::Break(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_.empty()) broken_ = why;
  cv_.notify_all();
}

Status SharedMemoryGroup::SameCount(uint32_t caller, size_t n) const {
  for (uint32_t r = 0; r < size_; ++r) {
    if (n_[r] != n) {
      return Status::InvalidArgument("rank " + std::to_string(r) + " passed " + std::to_string(n_[r]) +
                                     " floats, rank " + std::to_string(caller) + " " + std::to_string(n));
    }
  }
  return Status::Ok();
}

SharedGroupRank::~SharedGroupRank() {
  if (group_->size() > 1) group_->Break("rank " + std::to_string(rank_) + " left the group");
}

Status SharedGroupRank::Barrier() { return group_->Arrive("rank " + std::to_string(rank_) + ": barrier", nullptr); }

class SharedMemoryCollective final : public SharedGroupRank {
 public:
  SharedMemoryCollective(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank)
      : SharedGroupRank(std::move(group), rank) {}

  Status AllReduceRankOrder(float* data, size_t n) override {
    SharedMemoryGroup& g = *group_;
    const uint32_t W = g.size();
    if (W == 1) return Status::Ok();
    const std::string what = "rank " + std::to_string(rank_) + ": all-reduce of " + std::to_string(n) + " floats";
    g.data_[rank_] = data;
    g.n_[rank_] = n;
    Status st = g.Arrive(what, [&]() -> Status {
      if (Status same = g.SameCount(rank_, n); !same.ok()) return same;
      if (g.sum_.size() < n) g.sum_.resize(n);
      return Status::Ok();
    });
    if (!st.ok()) return st;
    // This rank's slice of the elements, each summed over the ranks in order.
    const size_t begin = n * rank_ / W, end = n * (rank_ + 1) / W;
    float* sum = g.sum_.data();
    std::copy(g.data_[0] + begin, g.data_[0] + end, sum + begin);
    for (uint32_t r = 1; r < W; ++r) {
      const float* x = g.data_[r];
      for (size_t i = begin; i < end; ++i) sum[i] += x[i];
    }
    if (Status s = g.Arrive(what, nullptr); !s.ok()) return s;
    // Nobody reads the inputs any more; the next call's sums wait for its
    // first barrier, which this rank reaches only after the copy.
    std::copy(sum, sum + n, data);
    return Status::Ok();
  }

  Status Broadcast(float* data, size_t n, uint32_t root) override {
    SharedMemoryGroup& g = *group_;
    if (g.size() == 1) return Status::Ok();
    const std::string what = "rank " + std::to_string(rank_) + ": broadcast from rank " + std::to_string(root);
    g.data_[rank_] = data;
    g.n_[rank_] = n;
    if (Status st = g.Arrive(what, nullptr); !st.ok()) return st;
    if (rank_ != root) std::copy(g.data_[root], g.data_[root] + n, data);
    return g.Arrive(what, nullptr);
  }
};

Result<std::unique_ptr<Collective>> ConnectSharedMemory(std::shared_ptr<SharedMemoryGroup> group, uint32_t rank) {
  if (!group || rank >= group->size()) {
    return Status::InvalidArgument("rank " + std::to_string(rank) + " of a shared-memory group of " +
                                   std::to_string(group ? group->size() : 0));
  }
  return std::unique_ptr<Collective>(std::make_unique<SharedMemoryCollective>(std::move(group), rank));
}

}  // namespace actorrec::gpu
