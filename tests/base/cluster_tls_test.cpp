// Mutual TLS keyed by the cluster secret, over a socket pair on one thread:
// members with one secret verify each other; another secret, no certificate
// or no TLS at all fail the handshake with a reason that says which.
#include "base/cluster_tls.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

namespace actorrec {
namespace {

const std::string kSecret = "a-test-secret-of-enough-length";

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() {
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
    for (int f : fd) fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK);
  }
  ~SocketPair() {
    for (int f : fd) close(f);
  }
};

// Steps both handshakes until neither can move: 1 done, 0 waiting, -1 failed.
struct Outcome {
  int client = 0, server = 0;
  std::string server_failure, client_failure;
};
Outcome Drive(SSL* client, SSL* server) {
  Outcome out;
  for (int i = 0; i < 50 && (out.client == 0 || out.server == 0); ++i) {
    for (auto [ssl, state, failure] : {std::tuple{client, &out.client, &out.client_failure},
                                       std::tuple{server, &out.server, &out.server_failure}}) {
      if (*state != 0) continue;
      ERR_clear_error();
      int r = SSL_do_handshake(ssl);
      if (r == 1) {
        *state = 1;
      } else {
        int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
          *state = -1;
          *failure = ClusterTls::HandshakeFailure(ssl, r);
        }
      }
    }
  }
  // TLS 1.3: the client finishes first; the server's verdict arrives on its
  // first read.
  if (out.client == 1 && out.server == -1) {
    char b;
    ERR_clear_error();
    if (SSL_read(client, &b, 1) <= 0) out.client = -1;
    ERR_clear_error();
  }
  return out;
}

TEST_CASE("members with one secret verify each other and name their member", "[base][tls]") {
  auto a = ClusterTls::Create(kSecret, "a");
  auto b = ClusterTls::Create(kSecret, "b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*a)->CaFingerprint() == (*b)->CaFingerprint());  // the same CA from the same secret
  SocketPair p;
  SSL* server = (*a)->NewSession(p.fd[0], true);
  SSL* client = (*b)->NewSession(p.fd[1], false);
  auto out = Drive(client, server);
  INFO(out.server_failure << " / " << out.client_failure);
  REQUIRE(out.client == 1);
  REQUIRE(out.server == 1);
  REQUIRE(ClusterTls::PeerMember(server) == "b");
  REQUIRE(ClusterTls::PeerMember(client) == "a");
  REQUIRE(SSL_version(server) == TLS1_3_VERSION);
  SSL_free(server);
  SSL_free(client);
}

TEST_CASE("a member with another secret fails the handshake on both sides", "[base][tls]") {
  auto a = ClusterTls::Create(kSecret, "a");
  auto intruder = ClusterTls::Create("not-the-cluster-secret-at-all", "b");
  REQUIRE((*a)->CaFingerprint() != (*intruder)->CaFingerprint());
  SocketPair p;
  SSL* server = (*a)->NewSession(p.fd[0], true);
  SSL* client = (*intruder)->NewSession(p.fd[1], false);
  auto out = Drive(client, server);
  REQUIRE(out.client == -1);
  // The client checks the server's certificate first and gives up.
  REQUIRE_THAT(out.client_failure, Catch::Contains("not issued under this cluster's secret") &&
                                       Catch::Contains("it claims member 'a'"));
  REQUIRE(out.server != 1);
  SSL_free(server);
  SSL_free(client);
}

TEST_CASE("a client without a certificate is refused: not a member of this cluster", "[base][tls]") {
  auto a = ClusterTls::Create(kSecret, "a");
  SocketPair p;
  SSL* server = (*a)->NewSession(p.fd[0], true);
  SSL_CTX* anon = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(anon, SSL_VERIFY_NONE, nullptr);
  SSL* client = SSL_new(anon);
  SSL_set_fd(client, p.fd[1]);
  SSL_set_connect_state(client);
  auto out = Drive(client, server);
  REQUIRE(out.server == -1);
  REQUIRE_THAT(out.server_failure, Catch::Contains("no certificate"));
  SSL_free(client);
  SSL_CTX_free(anon);
  SSL_free(server);
}

TEST_CASE("an HTTP request and random bytes are refused as not TLS", "[base][tls]") {
  auto a = ClusterTls::Create(kSecret, "a");
  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string random = "\x8f\x01\x77\xfe\x10\x00\x42\x99\x13\x37\xaa\x55\x00\xff\x01\x02";
  for (const auto& [bytes, expected] : {std::pair{http, "an HTTP request, not TLS"}, std::pair{random, "not TLS"}}) {
    SocketPair p;
    SSL* server = (*a)->NewSession(p.fd[0], true);
    REQUIRE(write(p.fd[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ERR_clear_error();
    const int r = SSL_do_handshake(server);
    REQUIRE(r <= 0);
    REQUIRE_THAT(ClusterTls::HandshakeFailure(server, r), Catch::Contains(expected));
    SSL_free(server);
  }
}

TEST_CASE("a peer that closes before the handshake is named as such", "[base][tls]") {
  auto a = ClusterTls::Create(kSecret, "a");
  SocketPair p;
  SSL* server = (*a)->NewSession(p.fd[0], true);
  shutdown(p.fd[1], SHUT_WR);
  ERR_clear_error();
  const int r = SSL_do_handshake(server);
  REQUIRE(r <= 0);
  REQUIRE_THAT(ClusterTls::HandshakeFailure(server, r), Catch::Contains("closed before the TLS handshake"));
  SSL_free(server);
}

}  // namespace
}  // namespace actorrec
