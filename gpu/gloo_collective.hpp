// Collectives over Gloo's TCP transport for CPU trainers: threads of one
// process (an in-process HashStore), or processes of one host (a FileStore
// directory). Any gloo::rendezvous::Store works, so a store over our own
// network layer plugs in later without touching this file.
//
// AllReduceRankOrder is the pipelined chain reduce + chain broadcast of
// chain_schedule.hpp on Gloo's point-to-point unbound buffers (the TLS
// collective runs the same schedule over its sockets).
//
// Gloo's TCP pairs are neither authenticated nor encrypted (Debian's Gloo
// has no TLS transport): between processes, use it only on a network that
// is trusted (tls_collective.hpp is the default there).
//
// Errors: Gloo reports timeouts and dead peers by throwing (gloo::IoException,
// gloo::EnforceNotMet); they never leave this file: each becomes an
// Unavailable status naming the rank, the operation and Gloo's message.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "gpu/collectives.hpp"

namespace gloo::rendezvous {
class Store;
}

namespace actorrec::gpu {

// Floats per pipelined chunk: 32 Ki floats = 128 KiB. Each chunk is one Gloo
// message (tens of µs of fixed cost on loopback, about as long as moving 128
// KiB), and the pipeline takes W−1 chunks to fill, so larger chunks waste
// less per message and smaller ones fill sooner.
constexpr size_t kDefaultChunkFloats = size_t{32} << 10;

struct GlooOptions {
  uint32_t rank = 0;
  uint32_t size = 1;
  // The address (or host name) this rank's TCP listener binds and that its
  // peers connect to, e.g. "127.0.0.1" for ranks on one host.
  std::string address = "127.0.0.1";
  // Bounds the rendezvous and each wait of every later operation; a peer
  // that does not answer within it breaks the collective.
  std::chrono::milliseconds timeout{30000};
  // Where the ranks exchange their addresses; shared by all ranks of a group.
  std::shared_ptr<gloo::rendezvous::Store> store;
  // Namespaces this group's keys in the store: unique per run and per group
  // (a FileStore keeps its files, and a reused key fails the rendezvous).
  std::string prefix;
  // Tests use tiny chunks to exercise the pipeline on small inputs.
  size_t chunk_floats = kDefaultChunkFloats;
};

// An in-process store for ranks that are threads of one process.
std::shared_ptr<gloo::rendezvous::Store> MakeInProcessStore();

// A store in `dir`, shared by processes on one host; the directory must
// exist (Gloo would fail deep in its rendezvous otherwise).
Result<std::shared_ptr<gloo::rendezvous::Store>> MakeFileStore(const std::string& dir);

// Connects rank `options.rank` to the other ranks of its group (blocks until
// all of them arrive or the timeout passes). W == 1 opens no socket.
Result<std::unique_ptr<Collective>> ConnectGloo(const GlooOptions& options);

}  // namespace actorrec::gpu
