// Mutual TLS between the members of a cluster, keyed by the cluster secret.
//
// Every member derives the same certificate authority from cluster.secret
// (scrypt, then an Ed25519 key: the same secret gives the same CA on every
// host, so users need nothing beyond the secret they already share). Each
// process then makes a fresh key of its own and a certificate for it, named
// after its member and signed by that CA. Both ends of every connection
// present their certificate and require the other's to chain to the CA
// (TLS 1.3 only, no session resumption), so a peer that does not know the
// secret fails the handshake and never reaches CAF; traffic is encrypted
// with keys that change per connection.
//
// What a certificate proves is knowledge of the secret, as the HMAC join
// proof does: members are not told apart (any member's certificate is
// accepted on any connection; the join checks the member name).
//
// Thread-safety: a ClusterTls is immutable once made; NewSession may be
// called from any thread. A session belongs to one thread at a time.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "base/status.hpp"

namespace actorrec {

// What the verification of a peer's certificate found, attached to each
// session (SSL's app data) by NewSession.
struct PeerCheck {
  std::string claimed_member;  // the CN of the peer's certificate, verified or not
  int verify_error = 0;        // X509_V_OK, or why the chain did not verify
};

class ClusterTls {
 public:
  // Derives the CA from `secret` and issues this process a certificate for
  // `member`. Fails only when libcrypto does (named in the status).
  static Result<std::shared_ptr<ClusterTls>> Create(const std::string& secret, const std::string& member);

  ~ClusterTls();
  ClusterTls(const ClusterTls&) = delete;
  ClusterTls& operator=(const ClusterTls&) = delete;

  // A session on socket `fd` (not yet handshaken; the caller frees it with
  // SSL_free), accepting when `server`. Null when OpenSSL cannot make one.
  SSL* NewSession(int fd, bool server) const;

  // The session's PeerCheck (owned by the session).
  static PeerCheck& CheckOf(SSL* ssl);

  // Why a handshake call that returned `ret` failed, in words for a log line:
  // not TLS at all (random bytes, an HTTP request), no certificate, a
  // certificate from another secret, or the peer closing. Reads and clears
  // this thread's OpenSSL error queue.
  static std::string HandshakeFailure(SSL* ssl, int ret);

  // The member a finished handshake's peer certificate names.
  static std::string PeerMember(SSL* ssl);

  // The CA certificate's SHA-256 fingerprint (hex): equal on every member
  // with the same secret; for logs and tests.
  const std::string& CaFingerprint() const { return ca_fingerprint_; }

 private:
  ClusterTls() = default;
  SSL_CTX* ctx_ = nullptr;
  std::string ca_fingerprint_;
};

}  // namespace actorrec
