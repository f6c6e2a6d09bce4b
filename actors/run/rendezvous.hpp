// The collectives' rendezvous of a cluster: the trainer ranks of a run, in
// different processes and on different hosts, exchange their addresses
// through one actor on the coordinator instead of a shared file system. It
// is reached over the cluster's TLS transport, so the addresses it hands out
// come from members; the TLS collective (gpu/tls_collective.hpp) checks the
// peer at each address all the same.
//
//   (put_atom, key, std::vector<char>)  stores a value (a later put replaces it)
//   (get_atom, key)                     answered with the value once it is stored
//
// MakeActorStore wraps the actor in Gloo's Store interface for
// gpu::TlsCollectiveOptions::store and gpu::GlooOptions::store; its calls
// block the calling thread (a sync_scheduler's, which is detached) and throw
// gloo::IoException when the rendezvous does not answer in time, which
// ConnectTls and ConnectGloo report as a status.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>

namespace gloo::rendezvous {
class Store;
}

namespace actorrec::trainer {

caf::actor SpawnRendezvous(caf::actor_system& sys);

std::shared_ptr<gloo::rendezvous::Store> MakeActorStore(caf::actor_system& sys, caf::actor rendezvous,
                                                        std::chrono::milliseconds timeout);

}  // namespace actorrec::trainer
