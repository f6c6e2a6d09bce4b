// The collective of a group of one, and the resident all-reduce's default.
#include "gpu/collectives.hpp"

#include <string>

#include "gpu/backend.hpp"

namespace actorrec::gpu {

Status Collective::AllReduceResident(Backend& backend, float* data, size_t n) {
  if (!backend.device_memory()) return AllReduceRankOrder(data, n);
  if (size() == 1) return Status::Ok();
  if (host_scratch_.size() < n) host_scratch_.resize(n);
  if (n > 0) backend.Download(host_scratch_.data(), data, n);
  if (Status st = AllReduceRankOrder(host_scratch_.data(), n); !st.ok()) return st;
  if (n > 0) backend.Upload(data, host_scratch_.data(), n);
  return Status::Ok();
}

namespace {

// W == 1: every operation is the identity, and no socket is opened.
class SoloCollective final : public Collective {
 public:
  uint32_t rank() const override { return 0; }
  uint32_t size() const override { return 1; }
  Status AllReduceRankOrder(float*, size_t) override { return Status::Ok(); }
  Status Broadcast(float*, size_t, uint32_t root) override {
    if (root != 0) return Status::InvalidArgument("broadcast root " + std::to_string(root) + " >= group size 1");
    return Status::Ok();
  }
  Status Barrier() override { return Status::Ok(); }
};

}  // namespace

std::unique_ptr<Collective> MakeSoloCollective() { return std::make_unique<SoloCollective>(); }

}  // namespace actorrec::gpu
