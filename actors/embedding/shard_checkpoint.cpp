// ShardStore checkpoints: the format is documented in shard_store.hpp.
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "actors/embedding/shard_store.hpp"
#include "base/atomic_file.hpp"
#include "base/digest.hpp"

static_assert(std::endian::native == std::endian::little,
              "the checkpoint format is little-endian and copies floats as is: port the codec first");

namespace actorrec::embedding {
namespace {

constexpr char kMagic[8] = {'\x89', 'A', 'R', 'S', '\r', '\n', '\x1a', '\n'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderFixedBytes = 56;
constexpr size_t kChecksumBytes = 8;
constexpr size_t kTrailerBytes = 24;
constexpr size_t kRowKeyBytes = 8;  // 4 t | 4 r
constexpr uint32_t kMaxFloats = uint32_t{1} << 20;
// Bounds a crafted T before anything is allocated: 2^24 tables is far more
// than any model has (Criteo has 26) and the header would be 128 MiB.
constexpr uint32_t kMaxTables = uint32_t{1} << 24;

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
T Get(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

uint64_t HeaderBytes(uint64_t tables) { return kHeaderFixedBytes + 8 * tables + kChecksumBytes; }

// The whole-file checksum over the section checksums (see the format).
class FileChecksum {
 public:
  void Add(uint64_t v) { Put(&words_, v); }
  uint64_t Value() const { return Digest64(words_); }

 private:
  std::string words_;  // 8 bytes per chunk: 8 KiB for a 1 GiB checkpoint
};

std::string Where(const std::string& path) { return path; }

Status Bad(const std::string& path, const std::string& what) {
  std::string msg = path;
  msg.append(": ").append(what);
  return Status::Corruption(std::move(msg));
}

// Reads exactly bytes.size() bytes; the caller already knows the file is
// long enough, so a short read is an I/O error (the file changed under us).
Status ReadExactly(std::FILE* f, const std::string& path, std::string* bytes, size_t n) {
  bytes->resize(n);
  if (n > 0 && std::fread(bytes->data(), 1, n, f) != n) {
    std::string msg = "cannot read ";
    msg.append(path).append(": ");
    msg.append(std::ferror(f) ? std::strerror(errno) : "the file ended early (changed while reading?)");
    return Status::IoError(std::move(msg));
  }
  return Status::Ok();
}

}  // namespace

Status ShardStore::SaveCheckpoint(const std::string& path, int64_t batch, uint32_t rows_per_chunk) const {
  const size_t f = format_.floats();
  const size_t row_bytes = kRowKeyBytes + f * sizeof(float);
  const uint32_t k =
      rows_per_chunk > 0 ? rows_per_chunk : static_cast<uint32_t>(std::max<size_t>(1, kCheckpointChunkBytes / row_bytes));
  const uint64_t rows = resident_rows();

  std::string header(kMagic, sizeof kMagic);
  Put<uint32_t>(&header, kFormatVersion);
  Put<uint32_t>(&header, shard_);
  Put<uint32_t>(&header, shards_);
  Put<uint32_t>(&header, format_.width);
  Put<uint32_t>(&header, format_.state_floats);
  Put<uint32_t>(&header, static_cast<uint32_t>(table_rows_.size()));
  Put<int64_t>(&header, batch);
  Put<uint64_t>(&header, rows);
  Put<uint32_t>(&header, k);
  Put<uint32_t>(&header, 0);
  for (const uint64_t r : table_rows_) Put<uint64_t>(&header, r);
  const uint64_t header_sum = Digest64(header);
  Put<uint64_t>(&header, header_sum);

  return WriteFileAtomically(path, [&](AtomicFileWriter& writer) -> Status {
    if (Status st = writer.Write(header); !st.ok()) return st;
    FileChecksum file_sum;
    file_sum.Add(header_sum);
    std::string chunk;
    chunk.reserve(size_t{k} * row_bytes + kChecksumBytes);
    uint64_t chunks = 0;
    Status status;
    const auto flush = [&] {
      const uint64_t sum = Digest64(chunk, chunks);
      Put<uint64_t>(&chunk, sum);
      file_sum.Add(sum);
      ++chunks;
      status = writer.Write(chunk);
      chunk.clear();
    };
    uint32_t in_chunk = 0;
    ForEachRow([&](uint32_t t, uint64_t r, const float* data) {
      if (!status.ok()) return;
      Put<uint32_t>(&chunk, t);
      Put<uint32_t>(&chunk, static_cast<uint32_t>(r));
      chunk.append(reinterpret_cast<const char*>(data), f * sizeof(float));
      if (++in_chunk == k) {
        flush();
        in_chunk = 0;
      }
    });
    if (status.ok() && in_chunk > 0) flush();
    if (!status.ok()) return status;
    std::string trailer;
    Put<uint64_t>(&trailer, chunks);
    Put<uint64_t>(&trailer, rows);
    file_sum.Add(chunks);
    file_sum.Add(rows);
    Put<uint64_t>(&trailer, file_sum.Value());
    return writer.Write(trailer);
  });
}

Result<ShardStore> ShardStore::LoadCheckpoint(const std::string& path, RowInit init, int64_t* batch) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    std::string msg = "cannot open the shard checkpoint ";
    msg.append(path).append(": ").append(std::strerror(errno));
    return errno == ENOENT ? Status::NotFound(std::move(msg)) : Status::IoError(std::move(msg));
  }
  struct stat st_buf;
  if (::fstat(::fileno(file.get()), &st_buf) != 0) {
    std::string msg = "cannot stat ";
    msg.append(path).append(": ").append(std::strerror(errno));
    return Status::IoError(std::move(msg));
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st_buf.st_size);
  const std::string_view magic(kMagic, sizeof kMagic);

  // ---- header ----
  std::string head;
  if (Status st = ReadExactly(file.get(), path, &head, std::min<uint64_t>(file_bytes, kHeaderFixedBytes)); !st.ok()) {
    return st;
  }
  if (head.size() < magic.size()) {
    if (magic.starts_with(head)) return Bad(path, "truncated: the file ends inside the magic");
    return Status::InvalidArgument(Where(path).append(": not an actorrec shard checkpoint (no magic)"));
  }
  if (!std::string_view(head).starts_with(magic)) {
    return Status::InvalidArgument(Where(path).append(": not an actorrec shard checkpoint (no magic)"));
  }
  if (head.size() < 12) return Bad(path, "truncated: the file ends inside the header");
  const auto version = Get<uint32_t>(head, 8);
  // Checked before the checksum: a newer header may lay out (and checksum)
  // differently, and its reader deserves the clearer message.
  if (version > kFormatVersion) {
    return Status::NotSupported(Where(path).append(": shard checkpoint format version ")
                                    .append(std::to_string(version))
                                    .append(" is newer than this build's ")
                                    .append(std::to_string(kFormatVersion)));
  }
  if (version == 0) return Bad(path, "shard checkpoint format version 0 does not exist");
  if (head.size() < kHeaderFixedBytes) return Bad(path, "truncated: the file ends inside the header");
  const uint32_t tables = Get<uint32_t>(head, 28);
  if (tables > kMaxTables) return Bad(path, std::string("the header claims ").append(std::to_string(tables)).append(" tables"));
  const uint64_t header_bytes = HeaderBytes(tables);
  if (header_bytes > file_bytes) return Bad(path, "truncated: the file ends inside the header");
  std::string rest;
  if (Status st = ReadExactly(file.get(), path, &rest, header_bytes - kHeaderFixedBytes); !st.ok()) return st;
  head += rest;
  const uint64_t header_sum = Get<uint64_t>(head, header_bytes - kChecksumBytes);
  if (header_sum != Digest64(std::string_view(head).substr(0, header_bytes - kChecksumBytes))) {
    return Bad(path, "checksum mismatch in the header");
  }

  // From here on the bytes are the writer's; the checks catch writer bugs
  // and crafted files.
  const uint32_t shard = Get<uint32_t>(head, 12), shards = Get<uint32_t>(head, 16);
  const RowFormat format{Get<uint32_t>(head, 20), Get<uint32_t>(head, 24)};
  const auto recorded_batch = Get<int64_t>(head, 32);
  const uint64_t rows = Get<uint64_t>(head, 40);
  const uint32_t k = Get<uint32_t>(head, 48);
  if (shards == 0 || shard >= shards) return Bad(path, std::string("the header's shard ").append(std::to_string(shard)).append(" of ")
                                                           .append(std::to_string(shards)).append(" is impossible"));
  if (uint64_t{format.width} + format.state_floats == 0 || uint64_t{format.width} + format.state_floats > kMaxFloats) {
    return Bad(path, "the header's row format is impossible");
  }
  if (k == 0 || Get<uint32_t>(head, 52) != 0) return Bad(path, "the header's chunking fields are impossible");
  std::vector<uint64_t> table_rows(tables);
  for (uint32_t t = 0; t < tables; ++t) table_rows[t] = Get<uint64_t>(head, kHeaderFixedBytes + 8 * size_t{t});

  // The header fixes the file's size (computed in 128 bits: a crafted R
  // must not wrap around to a plausible size).
  const size_t f = format.floats();
  const size_t row_bytes = kRowKeyBytes + f * sizeof(float);
  const uint64_t chunks = rows / k + (rows % k != 0 ? 1 : 0);
  const unsigned __int128 expected = static_cast<unsigned __int128>(header_bytes) +
                                     static_cast<unsigned __int128>(rows) * row_bytes +
                                     static_cast<unsigned __int128>(chunks) * kChecksumBytes + kTrailerBytes;
  if (expected != file_bytes) {
    std::string what = expected > file_bytes ? "truncated: " : "trailing bytes: ";
    what.append(std::to_string(file_bytes)).append(" bytes, the header describes ");
    what.append(expected > UINT64_MAX ? std::string("more than 2^64") : std::to_string(static_cast<uint64_t>(expected)));
    return Bad(path, what);
  }

  // ---- chunks ----
  ShardStore store(shard, shards, std::move(table_rows), format, std::move(init));
  FileChecksum file_sum;
  file_sum.Add(header_sum);
  std::string chunk;
  bool have_previous = false;
  uint32_t prev_t = 0, prev_r = 0;
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint64_t m = std::min<uint64_t>(k, rows - c * k);
    if (Status st = ReadExactly(file.get(), path, &chunk, m * row_bytes + kChecksumBytes); !st.ok()) return st;
    const std::string where = std::string("chunk ").append(std::to_string(c)).append(" of ").append(path);
    const std::string_view body = std::string_view(chunk).substr(0, m * row_bytes);
    const uint64_t sum = Get<uint64_t>(chunk, body.size());
    if (sum != Digest64(body, c)) return Status::Corruption(std::string("checksum mismatch in ").append(where));
    file_sum.Add(sum);
    for (uint64_t i = 0; i < m; ++i) {
      const size_t at = i * row_bytes;
      const auto t = Get<uint32_t>(body, at), r = Get<uint32_t>(body, at + 4);
      if (Status st = store.Check(t, r); !st.ok()) return Status::Corruption(where + ": " + st.message());
      if (have_previous && std::make_pair(t, r) <= std::make_pair(prev_t, prev_r)) {
        return Status::Corruption(where + ": rows are not in strictly ascending (t, r) order at row (" +
                                  std::to_string(t) + ", " + std::to_string(r) + ")");
      }
      have_previous = true;
      prev_t = t, prev_r = r;
      bool created;
      std::memcpy(store.Row(t, r, &created), body.data() + at + kRowKeyBytes, f * sizeof(float));
    }
  }

  // ---- trailer ----
  std::string trailer;
  if (Status st = ReadExactly(file.get(), path, &trailer, kTrailerBytes); !st.ok()) return st;
  if (Get<uint64_t>(trailer, 0) != chunks || Get<uint64_t>(trailer, 8) != rows) {
    return Bad(path, "the trailer's counts disagree with the header");
  }
  file_sum.Add(chunks);
  file_sum.Add(rows);
  if (Get<uint64_t>(trailer, 16) != file_sum.Value()) return Bad(path, "checksum mismatch in the trailer (whole file)");
  if (batch != nullptr) *batch = recorded_batch;
  return store;
}

}  // namespace actorrec::embedding
