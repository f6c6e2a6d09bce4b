// A build without NCCL (meson found no nccl.h/libnccl beside CUDA): nothing
// NCCL is compiled, and asking for it says so.
#include "gpu/nccl_collective.hpp"

namespace actorrec::gpu {

Status NcclSupport() {
  return Status::NotSupported(
      "this build has no NCCL (it needs the CUDA toolkit with nvcc on the PATH and NCCL's nccl.h and libnccl "
      "beside it; reconfigure and rebuild)");
}

Result<NcclUniqueIdBytes> MakeNcclUniqueId() { return NcclSupport(); }

Result<std::unique_ptr<Collective>> ConnectNccl(const NcclOptions&) { return NcclSupport(); }

Result<std::vector<std::unique_ptr<Collective>>> ConnectNcclRanks(const NcclOptions&, const std::vector<RankDevice>&) {
  return NcclSupport();
}

}  // namespace actorrec::gpu
