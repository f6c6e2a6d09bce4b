// Collectives between trainer processes over TCP with mutual TLS 1.3 keyed
// by the cluster secret (base/cluster_tls.hpp): what the sync schedulers of
// a cluster sum their gradients through.
//
// The ranks form a ring: rank r listens on its address (port 0: any free
// port, published through the rendezvous store), connects to rank r+1 (mod
// W) and accepts exactly one connection, from rank r−1. Both ends of each
// connection present a certificate of this process's member, signed by the
// CA derived from the secret, and require the other's to chain to it; the
// connecting side then names its group and rank in a hello, and the
// accepting side checks them (and, when `members` is given, that the
// certificate names the member that hosts that rank) before it answers.
// AllReduceRankOrder and Broadcast run the chain schedule of
// chain_schedule.hpp over the ring, so the sums are bitwise those of the
// Gloo and the shared-memory collectives. Barrier is a one-float all-reduce.
//
// Every chunk travels in a frame whose header names the operation, its
// sequence number (the same on every rank), the phase, the chunk and the
// byte count; the receiver checks each field against what it expects before
// it reads the payload into the caller's buffer, so a peer's wrong or forged
// header breaks the collective with a status naming it and never makes it
// allocate. Every wait for the peer (connecting, the handshake, each
// frame's send or receive) is bounded by `timeout`.
//
// After setup the listener stays open and a thread of the collective
// refuses whatever else connects (random bytes, a client without the
// cluster's certificate, a member connecting late or in place of a rank),
// each logged with its address and the reason, at most 20 lines per 10 s;
// the collective's own connections are not touched by it.
//
// Errors: the failure contract of collectives.hpp. A broken collective
// names the operation, its number, the peer rank and its address; it shuts
// both connections down so that its neighbours break at once too.
//
// Not hidden from a peer: the traffic's size and timing. A process holding
// the cluster secret is trusted, as everywhere in a cluster.
//
// Thread-safety: a collective is used by one thread at a time (its own
// listener thread shares nothing with the caller but the hand-over at
// setup). Writes to a closed peer would raise SIGPIPE: ConnectTls ignores
// that signal in this process (as the cluster's CAF transport does).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "gpu/collectives.hpp"
#include "gpu/gloo_collective.hpp"

namespace actorrec {
class ClusterTls;
}

namespace actorrec::gpu {

// The group's rank, size, address (the port is chosen at setup and
// published in the store), timeout, store, prefix (which also names the
// group in the hello) and chunk size are a Gloo group's (GlooOptions), so
// that one description of a group serves either collective; TLS adds:
struct TlsCollectiveOptions : GlooOptions {
  // This process's keys (ClusterTls::Create from cluster.secret).
  std::shared_ptr<ClusterTls> tls;
  // The member whose certificate each rank must present (members[r] for
  // rank r); empty: any certificate of the cluster is accepted.
  std::vector<std::string> members;
};

// Connects rank `options.rank` to its ring neighbours (blocks until both
// connections are up or the timeout passes). W == 1 opens no socket.
// Unavailable naming the peer rank, its address and why when setup fails.
Result<std::unique_ptr<Collective>> ConnectTls(const TlsCollectiveOptions& options);

// The wire, for tests that play a peer (or a forger holding the keys).
namespace detail {
// The store key under which rank `rank` publishes "address:port".
std::string TlsStoreKey(const std::string& prefix, uint32_t rank);
// The hello a connecting rank sends after the handshake.
std::string TlsHello(const std::string& prefix, uint32_t rank, uint32_t size);
// The accepting side's answer: 0 accepted, else why not.
std::string TlsAck(uint32_t code);
// A chunk's header: kind 1 all-reduce, 2 broadcast, 3 barrier; phase 0
// reduce, 1 broadcast; op the operation's number; bytes the payload's.
std::string TlsFrameHeader(uint8_t kind, uint8_t phase, uint64_t op, uint32_t chunk, uint32_t bytes);
}  // namespace detail

}  // namespace actorrec::gpu
