// The rank-order all-reduce as a schedule over point-to-point links, shared
// by the collectives that move its chunks over a network (Gloo's TCP pairs,
// our TLS sockets), so that they add in the same order and give the same
// bits as each other and as the shared-memory collective.
//
//   reduce:    rank r receives chunk c of (x0 + … + x_{r−1}) from r−1, adds
//              its own chunk, passes the sum to r+1; rank W−1 holds the total;
//   broadcast: W−1 → 0 → 1 → … → W−2, chunk by chunk (Broadcast from any
//              root is the same chain starting at the root).
// Every link carries n floats in each phase, as a ring all-reduce's links
// do, and a rank only ever talks to its two ring neighbours: it receives
// from r−1 and sends to r+1 (mod W). Chunks pipeline: a rank forwards chunk
// c while chunk c+1 is on the wire.
//
// A Link reports a failure by throwing; the schedule holds no state of its
// own between calls and lets the exception through to the collective, which
// turns it into its broken status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace actorrec::gpu::chain {

enum class Phase : uint8_t { kReduce = 0, kBroadcast = 1 };

// How many chunks a rank of the reduce chain may have asked for ahead of
// the one it adds: enough to keep the link busy while it adds, and it bounds
// the scratch memory to this many chunks whatever n is.
constexpr size_t kReceiveWindow = 4;

// One rank's two links in one operation: receives come from the previous
// rank of the ring, sends go to the next one. Chunks are received in the
// order they were expected, and each is received once.
class Link {
 public:
  virtual ~Link() = default;
  // A phase starts: receives land in recv_base (recv_floats long), sends
  // read from send_base (send_floats long).
  virtual void Begin(Phase phase, float* recv_base, size_t recv_floats, const float* send_base,
                     size_t send_floats) = 0;
  // Chunk `chunk` (count floats) will land at recv_base + offset. A link may
  // start receiving it at once (Gloo posts the receive).
  virtual void Expect(size_t chunk, size_t offset, size_t count) = 0;
  // Returns once the chunk is in place; it is the oldest expected one.
  virtual void Receive(size_t chunk) = 0;
  // Sends send_base[offset, offset + count) as chunk `chunk`. The range must
  // not change until Flush returns (a link may send in the background).
  virtual void Send(size_t chunk, size_t offset, size_t count) = 0;
  // Returns once every Send of this phase is done.
  virtual void Flush() = 0;
};

// data[i] becomes ((x0[i] + x1[i]) + …) + x_{W−1}[i] on every rank, where x_r
// is rank r's data; `scratch` is reused across calls. n == 0 sends nothing.
void AllReduceRankOrder(Link& link, uint32_t rank, uint32_t size, float* data, size_t n, size_t chunk_floats,
                        std::vector<float>& scratch);

// Every rank ends with root's data[0, n), passed root → root+1 → … → root−1.
void Broadcast(Link& link, uint32_t rank, uint32_t size, uint32_t root, float* data, size_t n, size_t chunk_floats);

}  // namespace actorrec::gpu::chain
