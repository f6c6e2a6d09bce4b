// Measuring the hardware profile of this machine.
#include "tools/bench_profile.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "configs/config.hpp"
#include "gpu/backend_select.hpp"
#include "models/model.hpp"
#include "tools/bench/sgemm_rate.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Copy bandwidth (bytes read + written per second), best of 5 copies of
// 64 MiB: beyond every cache, as a gather of embedding rows is.
double MemoryBandwidth() {
  const size_t bytes = size_t{64} << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::min(best, Since(start));
    std::swap(a, b);
  }
  return 2.0 * static_cast<double>(bytes) / best;
}

struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w, n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r);
  }
  return true;
}

// TCP on 127.0.0.1: bandwidth of 256 MiB sent in 1 MiB writes, then a
// one-byte ack; one-way latency as half the median of 2000 one-byte round
// trips (Nagle off). A thread echoes.
Status Loopback(double* bandwidth, double* latency) {
  Socket listener;
  listener.fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener.fd < 0 || ::bind(listener.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.fd, 1) != 0 || ::getsockname(listener.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status::IoError(std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno));
  }
  const size_t chunk = size_t{1} << 20, total = size_t{256} << 20;
  const int trips = 2000;
  std::thread peer([&] {
    Socket s;
    s.fd = ::accept(listener.fd, nullptr, nullptr);
    if (s.fd < 0) return;
    int one = 1;
    ::setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::vector<char> buf(chunk);
    for (size_t got = 0; got < total; got += chunk) {
      if (!ReadAll(s.fd, buf.data(), chunk)) return;
    }
    char c = 1;
    if (!WriteAll(s.fd, &c, 1)) return;
    for (int i = 0; i < trips; ++i) {
      if (!ReadAll(s.fd, &c, 1) || !WriteAll(s.fd, &c, 1)) return;
    }
  });
  Socket client;
  client.fd = ::socket(AF_INET, SOCK_STREAM, 0);
  Status status = Status::Ok();
  if (client.fd < 0 || ::connect(client.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    status = Status::IoError(std::string("cannot connect to 127.0.0.1: ") + std::strerror(errno));
    ::shutdown(listener.fd, SHUT_RDWR);
  } else {
    int one = 1;
    ::setsockopt(client.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::vector<char> buf(chunk, 7);
    char c = 0;
    const auto start = Clock::now();
    bool ok = true;
    for (size_t sent = 0; ok && sent < total; sent += chunk) ok = WriteAll(client.fd, buf.data(), chunk);
    ok = ok && ReadAll(client.fd, &c, 1);
    *bandwidth = static_cast<double>(total) / Since(start);
    std::vector<double> rtt;
    for (int i = 0; ok && i < trips; ++i) {
      const auto t0 = Clock::now();
      ok = WriteAll(client.fd, &c, 1) && ReadAll(client.fd, &c, 1);
      rtt.push_back(Since(t0));
    }
    if (!ok) {
      status = Status::IoError("the loopback transfer broke off");
    } else {
      std::nth_element(rtt.begin(), rtt.begin() + trips / 2, rtt.end());
      *latency = rtt[trips / 2] / 2;
    }
    ::shutdown(client.fd, SHUT_RDWR);
  }
  peer.join();
  return status;
}

}  // namespace

Result<MeasuredProfile> MeasureProfile() {
  MeasuredProfile m;
  planner::HardwareProfile& p = m.profile;
  char host[256] = "this machine";
  ::gethostname(host, sizeof host - 1);
  p.name = host;
  // The default config's DLRM shapes on one thread, a slice of 1024
  // samples: the rate one trainer's GEMMs get.
  const config::Config cfg = config::LoadEmbeddedLocal();
  const models::ModelSpec spec = models::SpecOf(cfg.model, 13, 26);
  auto choice = gpu::ChooseBackend("cpu");
  if (!choice.ok()) return choice.status();
  auto rate = bench::MeasureSgemmRate(spec, 1024, 1, *choice);
  if (!rate.ok()) return rate.status();
  p.gemm_flops = rate->best * 1e9;
  p.memory_bw = MemoryBandwidth();
  if (Status s = Loopback(&p.network_bw, &p.network_latency); !s.ok()) return s;
  p.host_device_bw = 0;
  // Half the machine's memory each for the trainers' caches and the shards
  // (they share this host).
  const double total = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  p.trainer_memory = total / 2;
  p.shard_memory = total / 2;
  p.host_cores = static_cast<double>(std::max<long>(::sysconf(_SC_NPROCESSORS_ONLN), 1));
  m.how = "gemm_gflops: sgemm of the default DLRM's MLP shapes, forward and both gradients, one thread, slice "
          "1024, best of 5 (" +
          choice->name +
          ")\nmemory_gbps: memcpy of 64 MiB, bytes read + written, best of 5\n"
          "network: TCP on 127.0.0.1, 256 MiB in 1 MiB writes; latency half the median of 2000 one-byte round "
          "trips\nmemory: half of this machine's RAM each for the trainers and the shards\nhost_cores: the cores online";
  return m;
}

}  // namespace actorrec
