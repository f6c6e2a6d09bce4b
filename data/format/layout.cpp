// Header encoding and checked parsing.
#include "data/format/layout.hpp"

#include <algorithm>
#include <cstring>

#include "base/digest.hpp"

namespace actorrec::data::format {
namespace {

// The host is little-endian (static_assert in the header), so integers are
// stored with memcpy.
template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void PutName(std::string* out, const std::string& name) {
  Put<uint32_t>(out, static_cast<uint32_t>(name.size()));
  out->append(name);
  out->resize(Align8(out->size()), '\0');
}

template <class T>
T Get(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

// Reads entries of the header's variable part with bounds checks, so that a
// header whose lengths lie cannot make us read past H.
class Cursor {
 public:
  Cursor(std::string_view bytes, size_t at) : bytes_(bytes), at_(at) {}
  template <class T>
  bool Read(T* v) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    *v = Get<T>(bytes_, at_);
    at_ += sizeof(T);
    return true;
  }
  bool ReadName(uint32_t len, std::string* name) {
    if (bytes_.size() - at_ < len) return false;
    name->assign(bytes_.substr(at_, len));
    at_ += len;
    const size_t padded = Align8(at_);
    if (padded > bytes_.size()) return false;
    at_ = padded;
    return true;
  }
  size_t at() const { return at_; }

 private:
  std::string_view bytes_;
  size_t at_;
};

}  // namespace

uint32_t HeaderInfo::chunk_size(uint64_t c) const {
  const uint64_t begin = c * samples_per_chunk;
  const uint64_t end = std::min<uint64_t>(num_samples, begin + samples_per_chunk);
  return static_cast<uint32_t>(end - begin);
}

uint32_t HeaderBytes(const DatasetSchema& schema) {
  uint64_t h = kHeaderFixedBytes;
  for (const auto& name : schema.dense_names) h += Align8(4 + name.size());
  for (const auto& table : schema.tables) h += Align8(16 + table.name.size());
  return static_cast<uint32_t>(h + kChecksumBytes);
}

std::string EncodeHeader(const HeaderInfo& info) {
  const DatasetSchema& schema = info.schema;
  ACTORREC_ASSERT(info.multi_hot.size() == schema.num_tables(), "one multi-hot flag per table");
  std::string out;
  out.reserve(HeaderBytes(schema));
  out.append(kMagic, sizeof kMagic);
  Put<uint32_t>(&out, kFormatVersion);
  Put<uint32_t>(&out, HeaderBytes(schema));
  Put<uint64_t>(&out, info.file_bytes);
  Put<uint64_t>(&out, info.num_samples);
  Put<uint32_t>(&out, info.samples_per_chunk);
  Put<uint32_t>(&out, static_cast<uint32_t>(schema.num_dense()));
  Put<uint32_t>(&out, static_cast<uint32_t>(schema.num_tables()));
  Put<uint32_t>(&out, 0);
  for (const auto& name : schema.dense_names) PutName(&out, name);
  for (size_t t = 0; t < schema.num_tables(); ++t) {
    Put<uint64_t>(&out, schema.tables[t].rows);
    Put<uint32_t>(&out, info.multi_hot[t] ? kMultiHotFlag : 0);
    PutName(&out, schema.tables[t].name);
  }
  Put<uint64_t>(&out, Digest64(out));
  ACTORREC_ASSERT(out.size() == HeaderBytes(schema), "HeaderBytes disagrees with EncodeHeader");
  return out;
}

Result<HeaderInfo> ParseHeader(std::string_view file, const std::string& path) {
  const std::string_view magic(kMagic, sizeof kMagic);
  if (file.empty()) return Status::InvalidArgument(path + ": not an actorrec dataset (the file is empty)");
  if (file.size() < magic.size()) {
    if (magic.starts_with(file)) return Status::Corruption(path + ": truncated: the file ends inside the magic");
    return Status::InvalidArgument(path + ": not an actorrec dataset (no magic)");
  }
  if (!file.starts_with(magic)) return Status::InvalidArgument(path + ": not an actorrec dataset (no magic)");
  if (file.size() < kHeaderFixedBytes) return Status::Corruption(path + ": truncated: the file ends inside the header");

  const auto version = Get<uint32_t>(file, 8);
  // The version is checked before the checksum: a newer header may lay out
  // (and checksum) differently, and its reader deserves the clearer message.
  if (version > kFormatVersion) {
    return Status::NotSupported(path + ": format version " + std::to_string(version) + " is newer than this build's " +
                                std::to_string(kFormatVersion));
  }
  if (version == 0) return Status::Corruption(path + ": format version 0 does not exist");

  HeaderInfo info;
  info.header_bytes = Get<uint32_t>(file, 12);
  const uint32_t h = info.header_bytes;
  if (h < kHeaderFixedBytes + kChecksumBytes || h % 8 != 0) {
    return Status::Corruption(path + ": header size " + std::to_string(h) + " is impossible");
  }
  if (h > file.size()) return Status::Corruption(path + ": truncated: the header ends beyond the file");
  if (Get<uint64_t>(file, h - kChecksumBytes) != Digest64(file.substr(0, h - kChecksumBytes))) {
    return Status::Corruption(path + ": checksum mismatch in the header");
  }

  // From here on the bytes are the writer's; the checks below catch writer
  // bugs and crafted files, not bit rot.
  info.file_bytes = Get<uint64_t>(file, 16);
  info.num_samples = Get<uint64_t>(file, 24);
  info.samples_per_chunk = Get<uint32_t>(file, 32);
  const auto num_dense = Get<uint32_t>(file, 36);
  const auto num_tables = Get<uint32_t>(file, 40);
  const auto bad = [&](const std::string& what) { return Status::Corruption(path + ": bad header: " + what); };
  if (info.samples_per_chunk == 0) return bad("0 samples per chunk");
  if (Get<uint32_t>(file, 44) != 0) return bad("reserved field is not 0");
  // Entries take at least 8 (dense) and 16 (table) bytes: bound the counts
  // before allocating for them.
  if (uint64_t{num_dense} * 8 + uint64_t{num_tables} * 16 > h) return bad("more entries than the header holds");

  Cursor cursor(file.substr(0, h - kChecksumBytes), kHeaderFixedBytes);
  info.schema.dense_names.resize(num_dense);
  for (auto& name : info.schema.dense_names) {
    uint32_t len = 0;
    if (!cursor.Read(&len) || !cursor.ReadName(len, &name)) return bad("dense names overrun the header");
  }
  info.schema.tables.resize(num_tables);
  info.multi_hot.resize(num_tables);
  for (size_t t = 0; t < num_tables; ++t) {
    uint32_t flags = 0;
    uint32_t len = 0;
    auto& table = info.schema.tables[t];
    if (!cursor.Read(&table.rows) || !cursor.Read(&flags) || !cursor.Read(&len) || !cursor.ReadName(len, &table.name)) {
      return bad("table entries overrun the header");
    }
    if ((flags & ~kMultiHotFlag) != 0) return bad("unknown flags on table " + table.name);
    info.multi_hot[t] = (flags & kMultiHotFlag) != 0;
  }
  if (cursor.at() != h - kChecksumBytes) return bad("header size disagrees with its entries");
  return info;
}

}  // namespace actorrec::data::format
