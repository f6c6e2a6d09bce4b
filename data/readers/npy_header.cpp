// .npy header parsing.
#include "data/readers/npy_header.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace actorrec::data::readers {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// Real headers are under 200 bytes; the cap keeps a corrupt length from
// making us read a whole data file as a header.
constexpr uint32_t kMaxHeaderBytes = 1 << 20;

std::string_view SkipSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
  return s;
}

// The text after "'key':" (or "\"key\":") in the dict; false if absent.
bool ValueOf(std::string_view dict, std::string_view key, std::string_view* value) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = std::string(1, quote) + std::string(key) + quote;
    const size_t at = dict.find(quoted);
    if (at == std::string_view::npos) continue;
    std::string_view rest = SkipSpaces(dict.substr(at + quoted.size()));
    if (rest.empty() || rest.front() != ':') return false;
    *value = SkipSpaces(rest.substr(1));
    return true;
  }
  return false;
}

}  // namespace

uint64_t NpyHeader::elements() const {
  // Saturates, so that a corrupt shape reads as "too big for the file"
  // instead of wrapping around to a small size that happens to fit.
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return ~uint64_t{0} / 16;
  }
  return n;
}

std::string Describe(const NpyHeader& header) {
  std::string out = header.type == NpyType::kFloat32 ? "float32 ["
                    : header.type == NpyType::kInt32 ? "int32 ["
                                                     : "int64 [";
  for (size_t i = 0; i < header.shape.size(); ++i) out += (i ? ", " : "") + std::to_string(header.shape[i]);
  return out + "]";
}

Result<NpyHeader> ParseNpyHeader(const std::string& path, std::string_view bytes) {
  const auto bad = [&](const std::string& why) { return Status::InvalidArgument(path + ": bad .npy header: " + why); };
  if (bytes.size() < kMagicBytes + 4 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    return bad("missing the \\x93NUMPY magic (not a .npy file)");
  }
  const auto major = static_cast<uint8_t>(bytes[6]);
  uint64_t len = 0;
  size_t prefix = 0;
  if (major == 1) {
    len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header length");
    for (int i = 0; i < 4; ++i) len |= uint64_t{static_cast<uint8_t>(bytes[8 + i])} << (8 * i);
    prefix = 12;
  } else {
    return Status::NotSupported(path + ": .npy format version " + std::to_string(major) +
                                " (this reader knows 1.0, 2.0 and 3.0)");
  }
  if (len > kMaxHeaderBytes || bytes.size() < prefix + len)
    return bad("header length " + std::to_string(len) + " runs past the file");
  const std::string_view dict = bytes.substr(prefix, len);

  NpyHeader header;
  header.data_offset = prefix + len;
  std::string_view v;
  if (!ValueOf(dict, "descr", &v) || v.size() < 2 || (v.front() != '\'' && v.front() != '"')) return bad("no 'descr'");
  const std::string_view descr = v.substr(1, v.find(v.front(), 1) - 1);
  if (descr == "<f4") {
    header.type = NpyType::kFloat32;
    header.item_bytes = 4;
  } else if (descr == "<i4") {
    header.type = NpyType::kInt32;
    header.item_bytes = 4;
  } else if (descr == "<i8") {
    header.type = NpyType::kInt64;
    header.item_bytes = 8;
  } else {
    return Status::NotSupported(path + ": unsupported .npy dtype '" + std::string(descr) +
                                "' (this reader takes little-endian <f4, <i4 and <i8)");
  }
  if (!ValueOf(dict, "fortran_order", &v)) return bad("no 'fortran_order'");
  if (v.starts_with("True")) {
    return Status::NotSupported(path +
                                ": .npy array is in Fortran (column-major) order; save it C-ordered "
                                "(np.ascontiguousarray) to read it here");
  }
  if (!v.starts_with("False")) return bad("'fortran_order' is neither True nor False");
  if (!ValueOf(dict, "shape", &v) || v.empty() || v.front() != '(') return bad("no 'shape' tuple");
  const size_t close = v.find(')');
  if (close == std::string_view::npos) return bad("unterminated 'shape' tuple");
  std::string_view dims = v.substr(1, close - 1);
  while (!(dims = SkipSpaces(dims)).empty()) {
    uint64_t d = 0;
    const auto [ptr, ec] = std::from_chars(dims.data(), dims.data() + dims.size(), d);
    if (ec != std::errc()) return bad("'shape' holds a non-integer");
    header.shape.push_back(d);
    dims.remove_prefix(static_cast<size_t>(ptr - dims.data()));
    dims = SkipSpaces(dims);
    if (!dims.empty() && dims.front() == ',') dims.remove_prefix(1);
  }
  if (header.shape.empty()) return bad("a 0-dimensional (scalar) array holds no samples");
  return header;
}

Result<NpyHeader> ReadNpyHeader(const ReadFile& file) {
  if (file.size() == 0) return Status::InvalidArgument(file.path() + ": file is empty");
  // 4 KiB covers every header numpy writes; if parsing fails on a longer
  // file, retry with the most a header may take before giving the error.
  std::string head(std::min<uint64_t>(file.size(), 4096), '\0');
  if (Status s = file.ReadAt(0, head.data(), head.size()); !s.ok()) return s;
  auto header = ParseNpyHeader(file.path(), head);
  if (!header.ok() && head.size() < file.size() && head.size() >= 12) {
    head.resize(std::min<uint64_t>(file.size(), kMaxHeaderBytes + 12));
    if (Status s = file.ReadAt(0, head.data(), head.size()); !s.ok()) return s;
    header = ParseNpyHeader(file.path(), head);
  }
  if (!header.ok()) return header;
  const uint64_t want = header->data_offset + header->elements() * header->item_bytes;
  if (file.size() < want) {
    return Status::Corruption(file.path() + ": truncated .npy file: " + Describe(*header) + " needs " +
                              std::to_string(want) + " bytes, the file has " + std::to_string(file.size()));
  }
  if (file.size() > want) {
    return Status::Corruption(file.path() + ": .npy file has " + std::to_string(file.size() - want) +
                              " bytes after the " + Describe(*header) + " array it declares");
  }
  return header;
}

}  // namespace actorrec::data::readers
