// Blocking HTTP GETs over POSIX sockets, bounded by a deadline.
#include "http/client.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace actorrec::http {
namespace {

using Clock = std::chrono::steady_clock;

int Remaining(Clock::time_point deadline) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(ms);
}

// Connects to host:port; the socket, or -1 with *why set.
int Connect(const std::string& host, uint16_t port, std::string* why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    *why = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    *why = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

}  // namespace

Result<std::string> Exchange(const std::string& host, uint16_t port, const std::string& raw,
                             std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string where = host + ":" + std::to_string(port);
  std::string why;
  const int fd = Connect(host, port, &why);
  if (fd < 0) return Status::Unavailable("cannot connect to " + where + ": " + why);
  size_t sent = 0;
  while (sent < raw.size()) {
    const ssize_t n = send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (a refused request): read its answer
    sent += static_cast<size_t>(n);
  }
  std::string got;
  char buf[16384];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, Remaining(deadline));
    if (ready <= 0) break;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return got;
}

Result<ClientResponse> Get(const std::string& host, uint16_t port, const std::string& target,
                           std::chrono::milliseconds timeout) {
  const std::string where = host + ":" + std::to_string(port);
  auto raw = Exchange(host, port,
                      "GET " + target + " HTTP/1.1\r\nHost: " + where + "\r\nConnection: close\r\n\r\n", timeout);
  if (!raw.ok()) return raw.status();
  const size_t head_end = raw->find("\r\n\r\n");
  if (raw->compare(0, 9, "HTTP/1.1 ") != 0 || head_end == std::string::npos) {
    return Status::Unavailable("no complete HTTP answer from " + where + " within " +
                               std::to_string(timeout.count()) + " ms");
  }
  ClientResponse r;
  r.status = std::atoi(raw->c_str() + 9);
  const std::string head = raw->substr(0, head_end);
  for (size_t at = head.find("\r\n"); at != std::string::npos; at = head.find("\r\n", at + 2)) {
    const size_t next = head.find("\r\n", at + 2);
    std::string line = head.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
    if (strncasecmp(line.c_str(), "content-type:", 13) == 0) {
      r.content_type = line.substr(13);
      while (!r.content_type.empty() && r.content_type.front() == ' ') r.content_type.erase(0, 1);
    }
  }
  r.body = raw->substr(head_end + 4);
  return r;
}

Status SplitHostPort(const std::string& address, std::string* host, uint16_t* port) {
  const size_t colon = address.rfind(':');
  auto bad = [&] { return Status::InvalidArgument("'" + address + "' is not HOST:PORT (e.g. 127.0.0.1:8080)"); };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return bad();
  std::string h = address.substr(0, colon);
  if (h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const std::string p = address.substr(colon + 1);
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return bad();
  const unsigned long value = std::stoul(p);
  if (value > 65535) return bad();
  *host = h;
  *port = static_cast<uint16_t>(value);
  return Status::Ok();
}

}  // namespace actorrec::http
