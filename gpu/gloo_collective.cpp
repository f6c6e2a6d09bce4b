#include "gpu/gloo_collective.hpp"

#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <vector>

namespace actorrec::gpu {
namespace {

// Our point-to-point messages live in their own slot space: Gloo's own
// algorithms use prefixes 0x01..0x08 in the top byte (gloo/types.h).
constexpr uint64_t kChainSlotPrefix = uint64_t{0xA7} << 56;
constexpr uint64_t kSlotMask = (uint64_t{1} << 56) - 1;

// How many chunks a rank of the reduce chain may have posted receives for:
// enough to keep the link busy while it adds the previous chunk, and it
// bounds the scratch memory to this many chunks whatever n is.
constexpr size_t kReceiveWindow = 4;

std::string Describe(const char* what, uint32_t rank, uint32_t size) {
  std::string s("gloo ");
  s.append(what).append(" on rank ").append(std::to_string(rank)).append(" of ").append(std::to_string(size));
  return s;
}

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

class GlooCollective final : public Collective {
 public:
  GlooCollective(std::shared_ptr<gloo::Context> context, std::shared_ptr<gloo::rendezvous::Store> store,
                 std::chrono::milliseconds timeout, size_t chunk_floats)
      : context_(std::move(context)), store_(std::move(store)), timeout_(timeout), chunk_(chunk_floats) {}

  uint32_t rank() const override { return static_cast<uint32_t>(context_->rank); }
  uint32_t size() const override { return static_cast<uint32_t>(context_->size); }

  Status AllReduceRankOrder(float* data, size_t n) override {
    return Run("all-reduce", [&](uint64_t op) {
      if (n > 0) ChainAllReduce(data, n, op);
    });
  }

  Status Broadcast(float* data, size_t n, uint32_t root) override {
    if (root >= size()) {
      return Status::InvalidArgument("broadcast root " + std::to_string(root) + " >= group size " +
                                     std::to_string(size()));
    }
    return Run("broadcast", [&](uint64_t op) {
      if (n == 0) return;
      gloo::BroadcastOptions opts(context_);
      opts.setOutput(data, n);
      opts.setRoot(static_cast<int>(root));
      opts.setTag(static_cast<uint32_t>(op));
      opts.setTimeout(timeout_);
      gloo::broadcast(opts);
    });
  }

  Status Barrier() override {
    return Run("barrier", [&](uint64_t op) {
      gloo::BarrierOptions opts(context_);
      opts.setTag(static_cast<uint32_t>(op));
      opts.setTimeout(timeout_);
      gloo::barrier(opts);
    });
  }

 private:
  // Numbers the operation (the same on every rank, as every rank makes the
  // same calls), runs it, and turns any Gloo exception into a broken state.
  template <class F>
  Status Run(const char* what, F&& body) {
    if (!broken_.ok()) return broken_;
    const uint64_t op = next_op_++;
    try {
      body(op);
      return Status::Ok();
    } catch (const std::exception& e) {
      broken_ = Status::Unavailable(
          Describe(what, rank(), size()).append(" failed (op ").append(std::to_string(op)).append("): ").append(e.what()));
    } catch (...) {
      broken_ = Status::Unavailable(Describe(what, rank(), size()).append(" failed with an unknown exception"));
    }
    // Receives may still be posted into the caller's buffer (a failed send
    // to the next rank leaves those from the previous one pending): closing
    // every pair guarantees nothing lands there after we return.
    try {
      context_->closeConnections();
    } catch (...) {
    }
    return broken_;
  }

  uint64_t Slot(uint64_t op, uint64_t phase) const { return kChainSlotPrefix | (((op << 1) | phase) & kSlotMask); }

  // The chain: reduce 0 → 1 → … → W−1, then broadcast W−1 → 0 → … → W−2.
  // Completions on one unbound buffer are counted, not named; each buffer
  // below talks to one peer on one slot, whose messages arrive in order, so
  // the k-th completed wait is chunk k.
  void ChainAllReduce(float* data, size_t n, uint64_t op) {
    const int w = context_->size, r = context_->rank;
    const int next = (r + 1) % w, prev = (r + w - 1) % w;
    const size_t chunks = (n + chunk_ - 1) / chunk_;
    auto offset = [&](size_t c) { return c * chunk_ * sizeof(float); };
    auto bytes = [&](size_t c) { return std::min(chunk_, n - c * chunk_) * sizeof(float); };
    auto to_next = context_->createUnboundBuffer(data, n * sizeof(float));
    size_t sends = 0;

    // Reduce. Rank 0's chunks are its own values.
    const uint64_t reduce_slot = Slot(op, 0);
    if (r == 0) {
      for (size_t c = 0; c < chunks; ++c, ++sends) to_next->send(next, reduce_slot, offset(c), bytes(c));
    } else {
      const size_t window = std::min(chunks, kReceiveWindow);
      if (scratch_.size() < window * chunk_) scratch_.resize(window * chunk_);
      auto from_prev = context_->createUnboundBuffer(scratch_.data(), window * chunk_ * sizeof(float));
      auto post = [&](size_t c) { from_prev->recv(prev, reduce_slot, (c % window) * chunk_ * sizeof(float), bytes(c)); };
      for (size_t c = 0; c < window; ++c) post(c);
      for (size_t c = 0; c < chunks; ++c) {
        WaitRecv(*from_prev);
        const float* partial = scratch_.data() + (c % window) * chunk_;
        float* own = data + c * chunk_;
        const size_t len = bytes(c) / sizeof(float);
        // partial + own is ((x0 + …) + x_{r−1}) + x_r: the rank order.
        for (size_t j = 0; j < len; ++j) own[j] = partial[j] + own[j];
        if (c + window < chunks) post(c + window);
        if (r != w - 1) to_next->send(next, reduce_slot, offset(c), bytes(c)), ++sends;
      }
    }
    // The broadcast below lands in `data`: the sends reading it must be done.
    for (; sends > 0; --sends) WaitSend(*to_next);

    // Broadcast the total held by rank W−1 around the ring.
    const uint64_t bcast_slot = Slot(op, 1);
    if (r == w - 1) {
      for (size_t c = 0; c < chunks; ++c, ++sends) to_next->send(next, bcast_slot, offset(c), bytes(c));
    } else {
      auto from_prev = context_->createUnboundBuffer(data, n * sizeof(float));
      for (size_t c = 0; c < chunks; ++c) from_prev->recv(prev, bcast_slot, offset(c), bytes(c));
      for (size_t c = 0; c < chunks; ++c) {
        WaitRecv(*from_prev);
        if (r != w - 2) to_next->send(next, bcast_slot, offset(c), bytes(c)), ++sends;
      }
    }
    for (; sends > 0; --sends) WaitSend(*to_next);
  }

  void WaitRecv(gloo::transport::UnboundBuffer& buffer) {
    if (!buffer.waitRecv(timeout_)) throw std::runtime_error("receive aborted");
  }
  void WaitSend(gloo::transport::UnboundBuffer& buffer) {
    if (!buffer.waitSend(timeout_)) throw std::runtime_error("send aborted");
  }

  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<gloo::rendezvous::Store> store_;  // outlives the context that rendezvoused through it
  std::chrono::milliseconds timeout_;
  size_t chunk_;
  uint64_t next_op_ = 0;
  std::vector<float> scratch_;  // the reduce chain's receive window, reused across calls
  Status broken_;
};

}  // namespace

std::shared_ptr<gloo::rendezvous::Store> MakeInProcessStore() {
  return std::make_shared<gloo::rendezvous::HashStore>();
}

Result<std::shared_ptr<gloo::rendezvous::Store>> MakeFileStore(const std::string& dir) {
  struct stat st {};
  if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::NotFound(std::string("gloo file store: '").append(dir).append("' is not an existing directory"));
  }
  try {
    return std::shared_ptr<gloo::rendezvous::Store>(std::make_shared<gloo::rendezvous::FileStore>(dir));
  } catch (const std::exception& e) {
    return Status::IoError(std::string("gloo file store in '").append(dir).append("': ").append(e.what()));
  }
}

Result<std::unique_ptr<Collective>> ConnectGloo(const GlooOptions& options) {
  if (options.size == 0 || options.rank >= options.size) {
    return Status::InvalidArgument("gloo: rank " + std::to_string(options.rank) + " is not in a group of size " +
                                   std::to_string(options.size));
  }
  if (options.chunk_floats == 0) return Status::InvalidArgument("gloo: chunk_floats must be positive");
  if (options.timeout.count() <= 0) return Status::InvalidArgument("gloo: timeout must be positive");
  if (options.size == 1) return std::unique_ptr<Collective>(std::make_unique<SoloCollective>());
  if (!options.store) return Status::InvalidArgument("gloo: no rendezvous store");
  if (options.prefix.empty()) return Status::InvalidArgument("gloo: empty store prefix (it must be unique per run)");

  const std::string who = Describe("connect", options.rank, options.size)
                              .append(" (address '")
                              .append(options.address)
                              .append("', prefix '")
                              .append(options.prefix)
                              .append("')");
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.address;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(options.rank),
                                                               static_cast<int>(options.size));
    context->setTimeout(options.timeout);
    gloo::rendezvous::PrefixStore prefixed(options.prefix, *options.store);
    context->connectFullMesh(prefixed, device);
    return std::unique_ptr<Collective>(
        std::make_unique<GlooCollective>(std::move(context), options.store, options.timeout, options.chunk_floats));
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string(who).append(" failed: ").append(e.what()));
  }
}

}  // namespace actorrec::gpu
