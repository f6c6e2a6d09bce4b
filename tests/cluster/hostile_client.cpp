// A hostile client for the security tests: what an outsider (or a member
// gone bad) sends to a coordinator's port on 127.0.0.1.
//
//   hostile_client caf HOST PORT
//     CAF's plain middleman, as any CAF 0.17 program connects: on success it
//     looks up embedding_shard[0] in the coordinator's directory and sends
//     the supervisor Stop(finished). Prints what it got; exit 0 when it
//     connected, 1 when it was refused.
//   hostile_client forge HOST PORT SECRET
//     Completes TLS with keys derived from SECRET (a member's), then sends a
//     BASP header announcing a 2 GiB payload. Exit 0 when the coordinator
//     closed the connection within 10 s, 1 when it stayed open.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <iostream>
#include <string>
#include <vector>

#include "actors/common/atoms.hpp"
#include "base/cluster_tls.hpp"
#include "messages/kinds.hpp"
#include "messages/registry.hpp"
#include "messages/text.hpp"

namespace {

using namespace actorrec;

int PlainCaf(const std::string& host, uint16_t port) {
  caf::actor_system_config cfg;
  wire::AddMessageTypes(cfg);
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto remote = sys.middleman().remote_actor(host, port);
  if (!remote) {
    std::cout << "refused: " << sys.render(remote.error()) << std::endl;
    return 1;
  }
  std::cout << "connected to the supervisor" << std::endl;
  {
    caf::scoped_actor self{sys};
    self->request(*remote, std::chrono::seconds(5), lookup_atom::value,
                  std::vector<std::string>{"embedding_shard[0]"})
        .receive([&](const std::vector<caf::actor>& found) { std::cout << "looked up " << found.size() << " actor(s)\n"; },
                 [&](caf::error& e) { std::cout << "lookup failed: " << sys.render(e) << "\n"; });
    auto stop = wire::Encode<wire::Stop>([](wire::Stop::Builder b) {
      b.setReason(wire::Stop::Reason::FINISHED);
      b.setMessage(wire::AsText("stopped by an outsider"));
    });
    self->send(*remote, stop_atom::value, stop);
    std::cout << "sent Stop(finished)" << std::endl;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the Stop goes out
  // Leaves without tearing the actor system down (a live connection can
  // keep it waiting).
  std::cout.flush();
  std::_Exit(0);
}

int Connect(const std::string& host, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int Forge(const std::string& host, uint16_t port, const std::string& secret) {
  auto tls = ClusterTls::Create(secret, "forger");
  if (!tls.ok()) {
    std::cout << tls.status().ToString() << std::endl;
    return 2;
  }
  int fd = Connect(host, port);
  if (fd < 0) {
    std::cout << "cannot connect" << std::endl;
    return 2;
  }
  SSL* ssl = (*tls)->NewSession(fd, false);
  if (SSL_do_handshake(ssl) != 1) {
    std::cout << "handshake failed: " << ClusterTls::HandshakeFailure(ssl, 0) << std::endl;
    return 2;
  }
  // A client_handshake header (operation 1) whose payload_len says 2 GiB.
  unsigned char header[32] = {0};
  header[0] = 1;
  header[4] = 0x80;
  if (SSL_write(ssl, header, sizeof header) != static_cast<int>(sizeof header)) {
    std::cout << "write failed" << std::endl;
    return 2;
  }
  std::cout << "sent a header announcing 2147483648 bytes" << std::endl;
  // Reads until the coordinator closes (its own BASP handshake comes first).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (SSL_pending(ssl) == 0 && poll(&p, 1, 100) <= 0) continue;
    ERR_clear_error();
    if (SSL_read(ssl, buf, sizeof buf) <= 0) {
      std::cout << "closed by the coordinator" << std::endl;
      return 0;
    }
  }
  std::cout << "still open after 10 s" << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "caf") return PlainCaf(args[1], static_cast<uint16_t>(std::stoi(args[2])));
  if (args.size() == 4 && args[0] == "forge") {
    return Forge(args[1], static_cast<uint16_t>(std::stoi(args[2])), args[3]);
  }
  std::cerr << "usage: hostile_client caf HOST PORT | forge HOST PORT SECRET\n";
  return 2;
}
