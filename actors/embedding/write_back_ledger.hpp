// WriteBackLedger: which batches' write-backs a shard has applied, from
// which the barrier of every RowFetch is judged (ARCHITECTURE §3).
//
// Protocol it enforces: each of the W writers (cache partitions) sends this
// shard exactly one write-back round per batch, in batch order, starting at
// first_batch (empty rounds included). Batch b is complete once every
// writer's round of b is recorded; complete_through() is the largest b with
// every batch <= b complete. A fetch with barrier β may be served when
// β <= complete_through().
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace actorrec::embedding {

class WriteBackLedger {
 public:
  WriteBackLedger(uint32_t writers, int64_t first_batch = 0)
      : next_(writers, first_batch), complete_through_(first_batch - 1) {}

  // Records writer's round of `batch`. InvalidArgument naming the writer when
  // it is out of range or the round is not the next one it owes (a lost,
  // repeated or reordered write-back would break the barrier silently).
  Status Record(uint32_t writer, int64_t batch) {
    if (writer >= next_.size()) {
      return Status::InvalidArgument("write-back from trainer " + std::to_string(writer) + ", but the run has " +
                                     std::to_string(next_.size()) + " trainers");
    }
    if (batch != next_[writer]) {
      return Status::InvalidArgument("write-back of batch " + std::to_string(batch) + " from trainer " +
                                     std::to_string(writer) + ", which owes batch " + std::to_string(next_[writer]) +
                                     " first: rounds must arrive once per batch, in order");
    }
    ++next_[writer];
    complete_through_ = *std::min_element(next_.begin(), next_.end()) - 1;
    return Status::Ok();
  }

  int64_t complete_through() const { return complete_through_; }
  bool Allows(int64_t barrier) const { return barrier <= complete_through_; }

 private:
  std::vector<int64_t> next_;  // per writer: the batch whose round it sends next
  int64_t complete_through_;
};

}  // namespace actorrec::embedding
