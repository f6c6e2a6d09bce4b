// The network transport of `actorrec node`: CAF's middleman over mutual TLS
// with the cluster's keys (base/cluster_tls.hpp), frames bounded before they
// are allocated (base/frame_bound.hpp), refused peers logged.
//
// Why not CAF's own OpenSSL module: it reads certificates from files, makes a
// fresh SSL_CTX per connection, has no handshake timeout, logs nothing that
// a release build keeps, and lets the broker allocate whatever a BASP header
// announces. This transport plugs into the same BASP broker through CAF's
// middleman-actor interface (connect/open), so the actors above see no
// difference; the plain middleman is never published on, and automatic
// direct connections between members (a plain TCP listener on every
// interface) stay disabled (runtime.cpp's system config).
//
// Every connection, accepted or opened, starts with a TLS handshake that
// must finish within 10 s (kHandshakeTimeout); until it does, nothing
// reaches CAF (the broker's own handshake bytes wait). A connection that
// fails is closed and logged once with the peer's address and why (not TLS,
// an HTTP request, no certificate, a certificate of another secret, silence),
// at most 20 lines per 10 s with a count of the rest. After the handshake,
// every BASP header is checked against 1 GiB (kMaxMessageBytes) before CAF
// reads its payload.
//
// Thread-safety: the methods may be called from any thread but the
// multiplexer's; a timer thread closes stalled handshakes.
#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "configs/config.hpp"

namespace actorrec {

class TlsTransport {
 public:
  // Derives the keys from cluster.secret and starts the transport's
  // middleman actor in `sys` for `member`.
  static Result<std::unique_ptr<TlsTransport>> Start(caf::actor_system& sys, const config::ClusterConfig& cluster,
                                                     const std::string& member);
  ~TlsTransport();
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // As caf::io::middleman's publish and remote_actor, over TLS.
  Result<uint16_t> Publish(const caf::actor& whom, uint16_t port, const std::string& address);
  void Unpublish(const caf::actor& whom, uint16_t port);
  Result<caf::actor> RemoteActor(const std::string& host, uint16_t port);

  // Set once a peer we connected to presented a certificate that does not
  // chain to this cluster's CA: the two sides hold different secrets, which
  // retrying will not fix. Says so in words; empty otherwise.
  std::string CertificateMismatch() const;

  // The CA certificate's fingerprint (equal on members with one secret).
  std::string CaFingerprint() const;

 private:
  struct Impl;
  explicit TlsTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace actorrec
