// The safetensors codec for float32 tensors, with a small strict JSON parser
// for exactly the header's shape (the project has no JSON library).
#include "base/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>

#include "base/atomic_file.hpp"
#include "base/json_number.hpp"

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is copied as is: port the codec first");

namespace actorrec {
namespace {

constexpr char kMetadataKey[] = "__metadata__";

// ---- writing ---------------------------------------------------------------


// ---- reading ---------------------------------------------------------------

struct TensorEntry {
  std::string name;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A recursive-descent parser for the header object. It accepts only the
// shapes the format allows, so every "unexpected" is an error naming what
// was expected and the byte offset within the header.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Status Parse(std::vector<TensorEntry>* tensors, std::map<std::string, std::string>* metadata) {
    SkipSpace();
    if (Status st = Expect('{', "the header object"); !st.ok()) return st;
    bool seen_metadata = false;
    std::vector<std::string> names;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
    } else {
      while (true) {
        std::string key;
        if (Status st = String(&key, "a tensor name"); !st.ok()) return st;
        if (Status st = Colon(); !st.ok()) return st;
        if (key == kMetadataKey) {
          if (seen_metadata) return Error("\"__metadata__\" appears twice");
          seen_metadata = true;
          if (Status st = Metadata(metadata); !st.ok()) return st;
        } else {
          TensorEntry entry;
          entry.name = std::move(key);
          if (Status st = Tensor(&entry); !st.ok()) return st;
          tensors->push_back(std::move(entry));
        }
        SkipSpace();
        if (Peek() == ',') {
          ++pos_;
          SkipSpace();
          continue;
        }
        if (Status st = Expect('}', "',' or '}' after a header entry"); !st.ok()) return st;
        break;
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("bytes after the header object");
    std::vector<std::string_view> sorted;
    for (const auto& t : *tensors) sorted.push_back(t.name);
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
      std::string msg = "tensor \"";
      msg.append(*dup).append("\" appears twice");
      return Error(msg);
    }
    return Status::Ok();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  // JSON whitespace only; the padding the writer adds is spaces.
  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  Status Error(const std::string& what) const {
    std::string msg = path_;
    msg.append(": safetensors header: ").append(what).append(" (at header byte ").append(std::to_string(pos_)).append(")");
    return Status::Corruption(std::move(msg));
  }
  Status TensorError(const std::string& name, const std::string& what) const {
    std::string msg = "tensor \"";
    msg.append(name).append("\": ").append(what);
    return Error(msg);
  }

  Status Expect(char c, const char* what) {
    if (Peek() != c || AtEnd()) {
      std::string msg = "expected ";
      msg.append(what);
      return Error(msg);
    }
    ++pos_;
    return Status::Ok();
  }
  Status Colon() {
    SkipSpace();
    if (Status st = Expect(':', "':'"); !st.ok()) return st;
    SkipSpace();
    return Status::Ok();
  }

  // Appends code point `cp` as UTF-8.
  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  Status Hex4(uint32_t* value) {
    if (text_.size() - pos_ < 4) return Error("a \\u escape is cut short");
    *value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      uint32_t digit;
      if (c >= '0' && c <= '9') {
        digit = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return Error("a \\u escape has a non-hex digit");
      }
      *value = *value * 16 + digit;
    }
    return Status::Ok();
  }

  // One well-formed UTF-8 sequence starting at pos_ (RFC 3629: no overlong
  // forms, no surrogates, at most U+10FFFF), copied to *out.
  Status Utf8(std::string* out) {
    const auto b0 = static_cast<unsigned char>(text_[pos_]);
    size_t len;
    uint32_t cp, min;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      len = 2, cp = b0 & 0x1f, min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      len = 3, cp = b0 & 0x0f, min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return Error("a string is not valid UTF-8");
    }
    if (text_.size() - pos_ < len) return Error("a string is not valid UTF-8");
    for (size_t i = 1; i < len; ++i) {
      const auto b = static_cast<unsigned char>(text_[pos_ + i]);
      if ((b & 0xc0) != 0x80) return Error("a string is not valid UTF-8");
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return Error("a string is not valid UTF-8");
    out->append(text_.substr(pos_, len));
    pos_ += len;
    return Status::Ok();
  }

  Status String(std::string* out, const char* what) {
    SkipSpace();
    if (Peek() != '"' || AtEnd()) {
      std::string msg = "expected ";
      msg.append(what).append(" (a string)");
      return Error(msg);
    }
    ++pos_;
    out->clear();
    while (true) {
      if (AtEnd()) return Error("a string is not terminated");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (static_cast<unsigned char>(c) < 0x20) return Error("a string holds a raw control character");
      if (static_cast<unsigned char>(c) >= 0x80) {
        if (Status st = Utf8(out); !st.ok()) return st;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (AtEnd()) return Error("a string is not terminated");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (Status st = Hex4(&cp); !st.ok()) return st;
          if (cp >= 0xdc00 && cp <= 0xdfff) return Error("a \\u escape is a lone low surrogate");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low;
            if (text_.substr(pos_, 2) != "\\u") return Error("a \\u escape is a lone high surrogate");
            pos_ += 2;
            if (Status st = Hex4(&low); !st.ok()) return st;
            if (low < 0xdc00 || low > 0xdfff) return Error("a \\u escape is a lone high surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Error("a string has an unknown escape");
      }
    }
  }

  // A JSON number that is a non-negative integer below 2^64: digits only,
  // no leading zero, no fraction or exponent (the format never has them).
  Status Integer(uint64_t* value, const std::string& tensor) {
    SkipSpace();
    if (AtEnd() || Peek() < '0' || Peek() > '9') return TensorError(tensor, "expected a non-negative integer");
    if (Peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9') {
      return TensorError(tensor, "an integer has a leading zero");
    }
    uint64_t v = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      const auto digit = static_cast<uint64_t>(Peek() - '0');
      if (v > (UINT64_MAX - digit) / 10) return TensorError(tensor, "an integer does not fit in 64 bits");
      v = v * 10 + digit;
      ++pos_;
    }
    if (Peek() == '.' || Peek() == 'e' || Peek() == 'E') return TensorError(tensor, "expected an integer, not a fraction");
    *value = v;
    return Status::Ok();
  }

  Status IntegerArray(std::vector<uint64_t>* out, const std::string& tensor) {
    SkipSpace();
    if (Peek() != '[' || AtEnd()) return TensorError(tensor, "expected '['");
    ++pos_;
    out->clear();
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      uint64_t v = 0;
      if (Status st = Integer(&v, tensor); !st.ok()) return st;
      out->push_back(v);
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        continue;
      }
      if (Peek() == ']' && !AtEnd()) {
        ++pos_;
        return Status::Ok();
      }
      return TensorError(tensor, "expected ',' or ']' in an array");
    }
  }

  Status Metadata(std::map<std::string, std::string>* metadata) {
    if (Status st = Expect('{', "an object of strings for \"__metadata__\""); !st.ok()) return st;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      std::string key, value;
      if (Status st = String(&key, "a metadata key"); !st.ok()) return st;
      if (Status st = Colon(); !st.ok()) return st;
      if (Status st = String(&value, "a metadata value"); !st.ok()) return st;
      if (!metadata->emplace(key, std::move(value)).second) {
        std::string msg = "metadata key \"";
        msg.append(key).append("\" appears twice");
        return Error(msg);
      }
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        continue;
      }
      return Expect('}', "',' or '}' in \"__metadata__\"");
    }
  }

  Status Tensor(TensorEntry* entry) {
    const std::string& name = entry->name;
    if (Peek() != '{' || AtEnd()) return TensorError(name, "expected an object");
    ++pos_;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    while (true) {
      std::string key;
      SkipSpace();
      if (Status st = String(&key, "a tensor field"); !st.ok()) return st;
      if (Status st = Colon(); !st.ok()) return st;
      if (key == "dtype") {
        if (has_dtype) return TensorError(name, "\"dtype\" appears twice");
        has_dtype = true;
        std::string dtype;
        if (Status st = String(&dtype, "a dtype"); !st.ok()) return st;
        if (dtype != "F32") {
          std::string msg = path_;
          msg.append(": tensor \"").append(name).append("\" has dtype ").append(dtype).append(", only F32 is supported");
          return Status::NotSupported(std::move(msg));
        }
      } else if (key == "shape") {
        if (has_shape) return TensorError(name, "\"shape\" appears twice");
        has_shape = true;
        if (Status st = IntegerArray(&entry->shape, name); !st.ok()) return st;
      } else if (key == "data_offsets") {
        if (has_offsets) return TensorError(name, "\"data_offsets\" appears twice");
        has_offsets = true;
        std::vector<uint64_t> offsets;
        if (Status st = IntegerArray(&offsets, name); !st.ok()) return st;
        if (offsets.size() != 2) return TensorError(name, "\"data_offsets\" must be [begin, end]");
        entry->begin = offsets[0];
        entry->end = offsets[1];
      } else {
        std::string msg = "unknown field \"";
        msg.append(key).append("\"");
        return TensorError(name, msg);
      }
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        continue;
      }
      if (Status st = Expect('}', "',' or '}' in a tensor"); !st.ok()) return st;
      break;
    }
    if (!has_dtype || !has_shape || !has_offsets) {
      return TensorError(name, "needs \"dtype\", \"shape\" and \"data_offsets\"");
    }
    return Status::Ok();
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t NamedTensor::elements() const {
  uint64_t n = 1;
  for (const uint64_t d : shape) n *= d;
  return n;
}

const NamedTensor* SafetensorsFile::Find(const std::string& name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<std::string> EncodeSafetensors(const std::vector<NamedTensor>& tensors,
                                      const std::map<std::string, std::string>& metadata) {
  std::vector<const NamedTensor*> order;
  for (const auto& t : tensors) {
    if (t.name.empty()) return Status::InvalidArgument("safetensors: a tensor has an empty name");
    if (t.name == kMetadataKey) return Status::InvalidArgument("safetensors: a tensor may not be called __metadata__");
    // The product is checked in 128 bits: a wrapped product could match.
    unsigned __int128 n = 1;
    for (const uint64_t d : t.shape) {
      n *= d;
      if (n > UINT64_MAX / sizeof(float)) n = UINT64_MAX;  // saturate; no vector is that large
    }
    if (n != t.values.size()) {
      std::string msg = "safetensors: tensor \"";
      msg.append(t.name).append("\" has ").append(std::to_string(t.values.size())).append(" values for its shape");
      return Status::InvalidArgument(std::move(msg));
    }
    order.push_back(&t);
  }
  // Python's safetensors sorts by (dtype alignment descending, name); all F32.
  std::sort(order.begin(), order.end(), [](const NamedTensor* a, const NamedTensor* b) { return a->name < b->name; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i]->name == order[i - 1]->name) {
      std::string msg = "safetensors: tensor \"";
      msg.append(order[i]->name).append("\" appears twice");
      return Status::InvalidArgument(std::move(msg));
    }
  }

  std::string header = "{";
  if (!metadata.empty()) {
    AppendJsonString(&header, kMetadataKey);
    header.append(":{");
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) header.push_back(',');
      first = false;
      AppendJsonString(&header, key);
      header.push_back(':');
      AppendJsonString(&header, value);
    }
    header.push_back('}');
  }
  uint64_t offset = 0;
  for (const NamedTensor* t : order) {
    if (header.size() > 1) header.push_back(',');
    AppendJsonString(&header, t->name);
    header.append(":{\"dtype\":\"F32\",\"shape\":[");
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (i > 0) header.push_back(',');
      header.append(std::to_string(t->shape[i]));
    }
    const uint64_t end = offset + t->values.size() * sizeof(float);
    header.append("],\"data_offsets\":[").append(std::to_string(offset)).append(",").append(std::to_string(end)).append("]}");
    offset = end;
  }
  header.push_back('}');
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header.size() + offset);
  const uint64_t n = header.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(header);
  for (const NamedTensor* t : order) {
    out.append(reinterpret_cast<const char*>(t->values.data()), t->values.size() * sizeof(float));
  }
  return out;
}

Result<SafetensorsFile> DecodeSafetensors(std::string_view bytes, const std::string& path) {
  const auto bad = [&](const std::string& what) {
    std::string msg = path;
    msg.append(": ").append(what);
    return Status::Corruption(std::move(msg));
  };
  if (bytes.size() < 8) return bad("not a safetensors file: shorter than its 8-byte header length");
  uint64_t n;
  std::memcpy(&n, bytes.data(), sizeof n);
  if (n > kMaxSafetensorsHeaderBytes) {
    return bad("safetensors header length " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(kMaxSafetensorsHeaderBytes));
  }
  if (n > bytes.size() - 8) {
    return bad("safetensors header length " + std::to_string(n) + " runs past the end of the file (" +
               std::to_string(bytes.size()) + " bytes): truncated?");
  }
  if (n < 2) return bad("safetensors header is too short to be a JSON object");

  SafetensorsFile file;
  std::vector<TensorEntry> entries;
  HeaderParser parser(bytes.substr(8, n), path);
  if (Status st = parser.Parse(&entries, &file.metadata); !st.ok()) return st;

  const std::string_view data = bytes.substr(8 + n);
  std::sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t expected_begin = 0;
  for (const TensorEntry& e : entries) {
    const auto tensor_bad = [&](const std::string& what) {
      std::string msg = "tensor \"";
      msg.append(e.name).append("\": ").append(what);
      return bad(msg);
    };
    if (e.end < e.begin) return tensor_bad("data_offsets end before they begin");
    if (e.begin != expected_begin) {
      return tensor_bad("data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                        ") do not follow the previous tensor's end " + std::to_string(expected_begin) +
                        " (a gap or an overlap)");
    }
    if (e.end > data.size()) {
      return tensor_bad("data_offsets end " + std::to_string(e.end) + " is past the data buffer (" +
                        std::to_string(data.size()) + " bytes): truncated?");
    }
    unsigned __int128 elements = 1;
    for (const uint64_t d : e.shape) {
      elements *= d;
      if (elements > (unsigned __int128){1} << 64) elements = (unsigned __int128){1} << 64;
    }
    if (elements * sizeof(float) != e.end - e.begin) {
      return tensor_bad("shape has a different element count than data_offsets hold (" +
                        std::to_string(e.end - e.begin) + " bytes of F32)");
    }
    expected_begin = e.end;
  }
  if (expected_begin != data.size()) {
    return bad("the tensors cover " + std::to_string(expected_begin) + " bytes of a " + std::to_string(data.size()) +
               "-byte data buffer");
  }
  for (TensorEntry& e : entries) {
    NamedTensor t;
    t.name = std::move(e.name);
    t.shape = std::move(e.shape);
    t.values.resize((e.end - e.begin) / sizeof(float));
    std::memcpy(t.values.data(), data.data() + e.begin, e.end - e.begin);
    file.tensors.push_back(std::move(t));
  }
  return file;
}

Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  auto bytes = EncodeSafetensors(tensors, metadata);
  if (!bytes.ok()) {
    std::string msg = path;
    msg.append(": ").append(bytes.status().message());
    return Status::InvalidArgument(std::move(msg));
  }
  return WriteFileAtomically(path, *bytes);
}

Result<SafetensorsFile> ReadSafetensors(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    std::string msg = "cannot open ";
    msg.append(path).append(": ").append(std::strerror(errno));
    return errno == ENOENT ? Status::NotFound(std::move(msg)) : Status::IoError(std::move(msg));
  }
  std::string bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.append(buf, got);
  if (std::ferror(f.get())) {
    std::string msg = "cannot read ";
    msg.append(path).append(": ").append(std::strerror(errno));
    return Status::IoError(std::move(msg));
  }
  return DecodeSafetensors(bytes, path);
}

}  // namespace actorrec
