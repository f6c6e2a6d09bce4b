#include "gpu/nccl_rendezvous.hpp"

#include <gloo/rendezvous/store.h>

#include <algorithm>
#include <exception>
#include <map>
#include <utility>
#include <vector>

namespace actorrec::gpu {
namespace {

std::string ReadyKey(const std::string& prefix, uint32_t rank) {
  return prefix + "/nccl-ready/" + std::to_string(rank);
}
std::string IdKey(const std::string& prefix) { return prefix + "/nccl-id"; }

// The value stored under `key` once it is there; Unavailable naming the key
// when the store does not answer within `timeout` (Gloo's stores throw).
Result<std::vector<char>> WaitFor(gloo::rendezvous::Store& store, const std::string& key,
                                  std::chrono::milliseconds timeout, uint32_t rank) {
  try {
    store.wait({key}, timeout);
    return store.get(key);
  } catch (const std::exception& e) {
    return Status::Unavailable("nccl rendezvous on rank " + std::to_string(rank) + ": key '" + key +
                               "' did not arrive within " + std::to_string(timeout.count()) + " ms: " + e.what());
  }
}

Status Put(gloo::rendezvous::Store& store, const std::string& key, const std::vector<char>& value, uint32_t rank) {
  try {
    store.set(key, value);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Unavailable("nccl rendezvous on rank " + std::to_string(rank) + ": storing key '" + key +
                               "' failed: " + e.what());
  }
}

}  // namespace

NcclReadiness NcclReadinessOf(const Status& nccl_support, bool backend_cuda, const std::string& backend_line,
                              const std::vector<RankDevice>& process_ranks) {
  if (!nccl_support.ok()) return {false, nccl_support.message()};
  if (!backend_cuda) return {false, "its trainers run the CPU backend (" + backend_line + ")"};
  if (const std::string shared = SharedDeviceOf(process_ranks); !shared.empty()) {
    return {false, "its process hosts " + std::to_string(process_ranks.size()) + " trainers on CUDA devices " +
                       DeviceList(process_ranks) + ": " + shared +
                       ", and NCCL refuses two ranks on one GPU (training.devices: one device per trainer)"};
  }
  return {true, ""};
}

Status CheckProcessRanks(uint32_t size, const std::vector<RankDevice>& ranks) {
  if (ranks.empty()) return Status::InvalidArgument("nccl: no rank to connect");
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank >= size) {
      return Status::InvalidArgument("nccl: rank " + std::to_string(ranks[i].rank) + " is not in a group of size " +
                                     std::to_string(size));
    }
    for (size_t j = 0; j < i; ++j) {
      if (ranks[j].rank == ranks[i].rank) {
        return Status::InvalidArgument("nccl: rank " + std::to_string(ranks[i].rank) + " is listed twice");
      }
    }
  }
  if (const std::string shared = SharedDeviceOf(ranks); !shared.empty()) {
    return Status::InvalidArgument("nccl: " + shared + ", and NCCL refuses two ranks on one GPU");
  }
  return Status::Ok();
}

Status CheckNcclRequest(const NcclReadiness& readiness, const std::string& config_path) {
  if (readiness.ready) return Status::Ok();
  return Status::InvalidArgument(config_path + ": cluster.collective = \"nccl\" cannot be used here: " +
                                 readiness.why_not + "; use \"auto\" (NCCL where every trainer can, else TLS) or "
                                 "\"tls\"");
}

Result<NcclAgreement> AgreeOnNccl(gloo::rendezvous::Store& store, const std::string& prefix, uint32_t rank,
                                  uint32_t size, const NcclReadiness& mine, std::chrono::milliseconds timeout) {
  if (rank >= size) {
    return Status::InvalidArgument("nccl rendezvous: rank " + std::to_string(rank) + " is not in a group of size " +
                                   std::to_string(size));
  }
  // "1", the GPU, a tab and the device's ordinal; or "0" and the reason.
  const std::string text = mine.ready ? "1" + mine.gpu + "\t" + std::to_string(mine.device) : "0" + mine.why_not;
  if (Status st = Put(store, ReadyKey(prefix, rank), std::vector<char>(text.begin(), text.end()), rank); !st.ok()) {
    return st;
  }
  NcclAgreement agreement{true, ""};
  std::map<std::string, std::pair<uint32_t, std::string>> on_gpu;  // GPU -> its first rank and that rank's device
  for (uint32_t r = 0; r < size; ++r) {
    const std::string key = ReadyKey(prefix, r);
    auto got = WaitFor(store, key, timeout, rank);
    if (!got.ok()) return got.status();
    const std::string value(got->begin(), got->end());
    const size_t tab = value.find('\t', 1);
    if (value.empty() || (value[0] != '1' && value[0] != '0') || (value[0] == '1' && tab == std::string::npos)) {
      return Status::Corruption("nccl rendezvous on rank " + std::to_string(rank) + ": key '" + key +
                                "' holds " + std::to_string(got->size()) + " bytes that are not a readiness answer");
    }
    if (!agreement.all_ready) continue;
    if (value[0] == '0') {
      agreement = {false, "rank " + std::to_string(r) + ": " + value.substr(1)};
      continue;
    }
    const std::string gpu = value.substr(1, tab - 1), device = value.substr(tab + 1);
    if (gpu.empty()) continue;
    auto [first, fresh] = on_gpu.emplace(gpu, std::make_pair(r, device));
    if (!fresh) {
      agreement = {false, "rank " + std::to_string(r) + ": its GPU " + gpu + " (device " + device +
                              " of its process) is rank " + std::to_string(first->second.first) + "'s too (device " +
                              first->second.second +
                              " of its process), and NCCL refuses two ranks on one GPU (members sharing a host: "
                              "CUDA_VISIBLE_DEVICES or training.devices, one GPU per trainer)"};
    }
  }
  return agreement;
}

Result<NcclUniqueIdBytes> ShareNcclUniqueId(gloo::rendezvous::Store& store, const std::string& prefix,
                                            uint32_t rank, const std::function<Result<NcclUniqueIdBytes>()>& make_id,
                                            std::chrono::milliseconds timeout) {
  const std::string key = IdKey(prefix);
  if (rank == 0) {
    auto id = make_id();
    if (!id.ok()) return id.status();
    if (Status st = Put(store, key, std::vector<char>(id->begin(), id->end()), rank); !st.ok()) return st;
    return id;
  }
  auto got = WaitFor(store, key, timeout, rank);
  if (!got.ok()) return got.status();
  if (got->size() != kNcclUniqueIdBytes) {
    return Status::Corruption("nccl rendezvous on rank " + std::to_string(rank) + ": key '" + key + "' holds " +
                              std::to_string(got->size()) + " bytes, not an NCCL unique id (" +
                              std::to_string(kNcclUniqueIdBytes) + " bytes)");
  }
  NcclUniqueIdBytes id;
  std::copy(got->begin(), got->end(), id.begin());
  return id;
}

}  // namespace actorrec::gpu
