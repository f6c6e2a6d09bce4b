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

#include "gpu/chain_schedule.hpp"

namespace actorrec::gpu {
namespace {

// Our point-to-point messages live in their own slot space: Gloo's own
// algorithms use prefixes 0x01..0x08 in the top byte (gloo/types.h).
constexpr uint64_t kChainSlotPrefix = uint64_t{0xA7} << 56;
constexpr uint64_t kSlotMask = (uint64_t{1} << 56) - 1;

std::string Describe(const char* what, uint32_t rank, uint32_t size) {
  std::string s("gloo ");
  s.append(what).append(" on rank ").append(std::to_string(rank)).append(" of ").append(std::to_string(size));
  return s;
}

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

  // The chain schedule's links (chain_schedule.hpp) over Gloo's unbound
  // buffers: receives are posted when expected, sends complete in the
  // background until Flush. Completions on one unbound buffer are counted,
  // not named; each buffer talks to one peer on one slot, whose messages
  // arrive in order, so the k-th completed wait is the k-th expected chunk.
  class Link final : public chain::Link {
   public:
    Link(gloo::Context& context, uint64_t op, std::chrono::milliseconds timeout)
        : context_(context),
          op_(op),
          timeout_(timeout),
          next_((context.rank + 1) % context.size),
          prev_((context.rank + context.size - 1) % context.size) {}

    void Begin(chain::Phase phase, float* recv_base, size_t recv_floats, const float* send_base,
               size_t send_floats) override {
      slot_ = kChainSlotPrefix | (((op_ << 1) | static_cast<uint64_t>(phase)) & kSlotMask);
      // Gloo's buffers are not const; sends only read from theirs.
      to_next_ = context_.createUnboundBuffer(const_cast<float*>(send_base), send_floats * sizeof(float));
      from_prev_.reset();
      if (recv_base != nullptr) from_prev_ = context_.createUnboundBuffer(recv_base, recv_floats * sizeof(float));
    }
    void Expect(size_t, size_t offset, size_t count) override {
      from_prev_->recv(prev_, slot_, offset * sizeof(float), count * sizeof(float));
    }
    void Receive(size_t) override {
      if (!from_prev_->waitRecv(timeout_)) throw std::runtime_error("receive aborted");
    }
    void Send(size_t, size_t offset, size_t count) override {
      to_next_->send(next_, slot_, offset * sizeof(float), count * sizeof(float));
      ++sends_;
    }
    void Flush() override {
      for (; sends_ > 0; --sends_) {
        if (!to_next_->waitSend(timeout_)) throw std::runtime_error("send aborted");
      }
    }

   private:
    gloo::Context& context_;
    const uint64_t op_;
    const std::chrono::milliseconds timeout_;
    const int next_, prev_;
    uint64_t slot_ = 0;
    std::unique_ptr<gloo::transport::UnboundBuffer> to_next_, from_prev_;
    size_t sends_ = 0;
  };

  void ChainAllReduce(float* data, size_t n, uint64_t op) {
    Link link(*context_, op, timeout_);
    chain::AllReduceRankOrder(link, rank(), size(), data, n, chunk_, scratch_);
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
  if (options.size == 1) return MakeSoloCollective();
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
