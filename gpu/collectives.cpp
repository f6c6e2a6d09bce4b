// The collective of a group of one.
#include "gpu/collectives.hpp"

#include <string>

namespace actorrec::gpu {
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
