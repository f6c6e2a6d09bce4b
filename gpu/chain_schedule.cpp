// The chain all-reduce and broadcast over a Link.
#include "gpu/chain_schedule.hpp"

#include <algorithm>

namespace actorrec::gpu::chain {
namespace {

size_t ChunkCount(size_t n, size_t chunk) { return (n + chunk - 1) / chunk; }
size_t ChunkLength(size_t c, size_t n, size_t chunk) { return std::min(chunk, n - c * chunk); }

// The reduce chain 0 → 1 → … → W−1: rank W−1 ends with the total.
void Reduce(Link& link, uint32_t r, uint32_t w, float* data, size_t n, size_t chunk, std::vector<float>& scratch) {
  const size_t chunks = ChunkCount(n, chunk);
  if (r == 0) {
    // Rank 0's chunks are its own values.
    link.Begin(Phase::kReduce, nullptr, 0, data, n);
    for (size_t c = 0; c < chunks; ++c) link.Send(c, c * chunk, ChunkLength(c, n, chunk));
    link.Flush();
    return;
  }
  const size_t window = std::min(chunks, kReceiveWindow);
  if (scratch.size() < window * chunk) scratch.resize(window * chunk);
  link.Begin(Phase::kReduce, scratch.data(), window * chunk, data, n);
  auto expect = [&](size_t c) { link.Expect(c, (c % window) * chunk, ChunkLength(c, n, chunk)); };
  for (size_t c = 0; c < window; ++c) expect(c);
  for (size_t c = 0; c < chunks; ++c) {
    link.Receive(c);
    const float* partial = scratch.data() + (c % window) * chunk;
    float* own = data + c * chunk;
    const size_t len = ChunkLength(c, n, chunk);
    // partial + own is ((x0 + …) + x_{r−1}) + x_r: the rank order.
    for (size_t j = 0; j < len; ++j) own[j] = partial[j] + own[j];
    if (c + window < chunks) expect(c + window);
    if (r != w - 1) link.Send(c, c * chunk, len);
  }
  // What follows may land in `data`: the sends reading it must be done.
  link.Flush();
}

}  // namespace

void Broadcast(Link& link, uint32_t r, uint32_t w, uint32_t root, float* data, size_t n, size_t chunk) {
  const size_t chunks = ChunkCount(n, chunk);
  const uint32_t last = (root + w - 1) % w;  // the end of the chain sends nothing
  if (r == root) {
    link.Begin(Phase::kBroadcast, nullptr, 0, data, n);
    for (size_t c = 0; c < chunks; ++c) link.Send(c, c * chunk, ChunkLength(c, n, chunk));
  } else {
    link.Begin(Phase::kBroadcast, data, n, data, n);
    for (size_t c = 0; c < chunks; ++c) link.Expect(c, c * chunk, ChunkLength(c, n, chunk));
    for (size_t c = 0; c < chunks; ++c) {
      link.Receive(c);
      if (r != last) link.Send(c, c * chunk, ChunkLength(c, n, chunk));
    }
  }
  link.Flush();
}

void AllReduceRankOrder(Link& link, uint32_t r, uint32_t w, float* data, size_t n, size_t chunk,
                        std::vector<float>& scratch) {
  if (n == 0 || w == 1) return;
  Reduce(link, r, w, data, n, chunk, scratch);
  Broadcast(link, r, w, w - 1, data, n, chunk);
}

}  // namespace actorrec::gpu::chain
