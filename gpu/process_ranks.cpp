#include "gpu/process_ranks.hpp"

#include <algorithm>
#include <string>

namespace actorrec::gpu {

ProcessRanks::ProcessRanks(std::vector<uint32_t> ranks, Connect connect)
    : ranks_(std::move(ranks)), connect_(std::move(connect)) {}

Result<std::unique_ptr<Collective>> ProcessRanks::Take(uint32_t rank) {
  // Held while connecting: the other ranks wait here for the group.
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(ranks_.begin(), ranks_.end(), rank) == ranks_.end()) {
    return Status::InvalidArgument("collective: rank " + std::to_string(rank) + " is not one of this process's");
  }
  if (!made_) {
    made_ = true;
    auto made = connect_();
    if (!made.ok()) {
      failed_ = made.status();
    } else if (made->size() != ranks_.size()) {
      failed_ = Status::Unavailable("collective: " + std::to_string(made->size()) + " collectives made for " +
                                 std::to_string(ranks_.size()) + " ranks");
    } else {
      for (size_t i = 0; i < ranks_.size(); ++i) untaken_[ranks_[i]] = std::move((*made)[i]);
    }
  }
  if (!failed_.ok()) return failed_;
  auto it = untaken_.find(rank);
  if (it == untaken_.end()) {
    return Status::InvalidArgument("collective: rank " + std::to_string(rank) + "'s collective was taken already");
  }
  std::unique_ptr<Collective> mine = std::move(it->second);
  untaken_.erase(it);
  return mine;
}

}  // namespace actorrec::gpu
