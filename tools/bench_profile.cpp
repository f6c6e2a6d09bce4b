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

#include "actors/embedding/shard_store.hpp"
#include "configs/config.hpp"
#include "configs/row_state.hpp"
#include "gpu/backend_select.hpp"
#include "messages/rows_codec.hpp"
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

// The processor time one row costs an embedding shard and a cache
// partition together, per fetch or write-back, in seconds: the code the
// shard actor (actors/embedding/shard_actor.cpp) and the cache partition
// (actors/cache/cache_partition_actor.cpp) run on a batch's rows, in this
// process, no network. A fetch: the partition encodes the RowFetch, the
// shard decodes it and encodes the Rows from its store, the partition
// decodes them and copies each row out; a write-back: the partition encodes
// the WriteBack from its rows, the shard decodes it, stores the rows and
// encodes the ack, the partition decodes the ack. `rows` rows of `format`
// spread over one table of 2^20 rows, every row already resident (the
// steady state); best of 25 of each (a few ms each), summed, over 2 × rows.
Result<double> ShardRowSeconds(const embedding::RowFormat& format, uint32_t rows) {
  const uint64_t table_rows = uint64_t{1} << 20;
  embedding::ShardStore store(0, 1, {table_rows}, format, [&](uint32_t, uint64_t r, float* out) {
    for (uint32_t i = 0; i < format.floats(); ++i) out[i] = static_cast<float>((r + i) % 97) * 1e-3f;
  });
  wire::RowKeys keys;
  uint64_t x = 0x9E3779B97F4A7C15ull;  // a fixed spread of distinct-enough rows
  for (uint32_t i = 0; i < rows; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    keys.push_back(0, static_cast<data::RowId>((x >> 33) % table_rows));
  }
  wire::RowFetchHeader fetch_header;
  wire::RowsHeader rows_header;
  rows_header.dim = format.width;
  rows_header.state_width = format.state_floats;
  std::vector<float> landed(size_t{rows} * format.floats());
  std::vector<float> out(size_t{rows} * format.floats());
  if (Status s = store.Fetch(keys.tables.data(), keys.rows.data(), rows, out.data()); !s.ok()) return s;
  double best_fetch = 1e30, best_write_back = 1e30;
  for (int rep = 0; rep < 25; ++rep) {
    auto start = Clock::now();
    const auto request = wire::EncodeRowFetch(fetch_header, keys);
    wire::RowFetchHeader got_header;
    wire::RowKeys got_keys;
    if (Status s = wire::DecodeRowFetch(request, &got_header, &got_keys); !s.ok()) return s;
    Status fill;
    const auto reply = wire::EncodeRows(
        rows_header, got_keys,
        [&](float* dst) { return store.Fetch(got_keys.tables.data(), got_keys.rows.data(), got_keys.size(), dst); },
        &fill);
    if (!fill.ok()) return fill;
    wire::RowPayload payload;
    if (Status s = wire::DecodeRows(reply, format.floats(), &payload); !s.ok()) return s;
    for (size_t i = 0; i < payload.keys().size(); ++i) payload.CopyRow(i, landed.data() + i * format.floats());
    best_fetch = std::min(best_fetch, Since(start));

    start = Clock::now();
    const auto write_back = wire::EncodeWriteBack(rows_header, keys, [&](float* dst) {
      std::memcpy(dst, landed.data(), landed.size() * sizeof(float));
    });
    wire::RowPayload stored;
    if (Status s = wire::DecodeWriteBack(write_back, format.floats(), &stored); !s.ok()) return s;
    const float* data = reinterpret_cast<const float*>(stored.bytes());
    if (Status s = store.Store(stored.keys().tables.data(), stored.keys().rows.data(), stored.keys().size(), data);
        !s.ok()) {
      return s;
    }
    const auto ack = wire::EncodeWriteBackAck({0, 0, 0, rows, 0});
    wire::WriteBackAckInfo ack_info;
    if (Status s = wire::DecodeWriteBackAck(ack, &ack_info); !s.ok()) return s;
    best_write_back = std::min(best_write_back, Since(start));
  }
  return (best_fetch + best_write_back) / (2.0 * rows);
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
  const uint32_t dim = static_cast<uint32_t>(cfg.model.embedding_dim);
  const embedding::RowFormat format{dim, config::RowStateFloats(cfg.optimizer.sparse, dim)};
  const uint32_t shard_rows = 16384;
  auto row = ShardRowSeconds(format, shard_rows);
  if (!row.ok()) return row.status();
  p.shard_row = *row;
  m.how = "gemm_gflops: sgemm of the default DLRM's MLP shapes, forward and both gradients, one thread, slice "
          "1024, best of 5 (" +
          choice->name +
          ")\nmemory_gbps: memcpy of 64 MiB, bytes read + written, best of 5\n"
          "network: TCP on 127.0.0.1, 256 MiB in 1 MiB writes; latency half the median of 2000 one-byte round "
          "trips\nmemory: half of this machine's RAM each for the trainers and the shards\nhost_cores: the cores online\n"
          "shard_row_us: a fetch and a write-back of " +
          std::to_string(shard_rows) + " rows of " + std::to_string(format.floats()) +
          " floats through the shard's and the cache partition's code (codecs, store), in process, best of 25, "
          "per row and direction";
  return m;
}

}  // namespace actorrec
