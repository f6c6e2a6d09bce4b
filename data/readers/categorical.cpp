// Categorical mapping: hashing, dictionary building, save and load.
#include "data/readers/categorical.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "base/digest.hpp"
#include "data/readers/posix_file.hpp"

// Inlined XXH3 for HashRow, called once per categorical value read; the
// same function as Digest64 (XXH3-64 with seed 0), without the call.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace actorrec::data::readers {
namespace {

constexpr char kMagic[8] = {'A', 'R', 'C', 'A', 'T', 'M', 'A', 'P'};
// 2: the source files' identity (mapping_source.hpp) after the tables.
constexpr uint32_t kVersion = 2;
constexpr uint64_t kMaxRows = uint64_t{1} << 32;  // RowId is 32-bit

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Bounds-checked little-endian reads over the loaded bytes.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool U64(uint64_t* v) { return Int(8, v); }
  bool U32(uint32_t* v) {
    uint64_t w = 0;
    if (!Int(4, &w)) return false;
    *v = static_cast<uint32_t>(w);
    return true;
  }
  bool U8(uint8_t* v) {
    uint64_t w = 0;
    if (!Int(1, &w)) return false;
    *v = static_cast<uint8_t>(w);
    return true;
  }
  bool Bytes(size_t n, std::string_view* v) {
    if (bytes_.size() - at_ < n) return false;
    *v = bytes_.substr(at_, n);
    at_ += n;
    return true;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  bool Int(size_t n, uint64_t* v) {
    if (bytes_.size() - at_ < n) return false;
    uint64_t w = 0;
    for (size_t i = 0; i < n; ++i) w |= uint64_t{static_cast<uint8_t>(bytes_[at_ + i])} << (8 * i);
    at_ += n;
    *v = w;
    return true;
  }
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

CategoryKey KeyOfString(std::string_view value) { return Digest64(value); }

RowId CategoricalMapping::HashRow(CategoryKey key, uint64_t rows) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((key >> (8 * i)) & 0xff);
  return static_cast<RowId>(1 + XXH3_64bits(bytes, sizeof bytes) % (rows - 1));
}

Result<CategoricalMapping> CategoricalMapping::Hashing(const std::vector<TableSchema>& tables) {
  std::vector<TableMappingSpec> specs;
  for (const auto& t : tables) specs.push_back({t.name, MappingKind::kHash, t.rows, 1});
  auto builder = DictionaryBuilder::Create(std::move(specs));
  if (!builder.ok()) return builder.status();
  return std::move(builder).value().Finish();
}

std::vector<TableSchema> CategoricalMapping::tables() const {
  std::vector<TableSchema> out;
  for (const auto& t : tables_) out.push_back({t.name, t.rows});
  return out;
}

Status CategoricalMapping::Save(const std::string& path) const {
  std::string out(kMagic, sizeof kMagic);
  PutU32(&out, kVersion);
  PutU32(&out, static_cast<uint32_t>(tables_.size()));
  for (const auto& t : tables_) {
    PutU32(&out, static_cast<uint32_t>(t.name.size()));
    out += t.name;
    out.push_back(static_cast<char>(t.kind));
    PutU64(&out, t.rows);
    PutU64(&out, t.min_count);
    if (t.kind == MappingKind::kHash) {
      PutU64(&out, 0);
      continue;
    }
    // Keys in row order: the file is the same whatever the hash map's layout.
    std::vector<CategoryKey> by_row(t.rows - 2);
    t.rows_of.ForEach([&](uint64_t key, RowId row) { by_row[row - 2] = key; });
    PutU64(&out, by_row.size());
    for (CategoryKey k : by_row) PutU64(&out, k);
  }
  PutU32(&out, static_cast<uint32_t>(sources_.size()));
  for (const auto& f : sources_) {
    PutU32(&out, static_cast<uint32_t>(f.path.size()));
    out += f.path;
    PutU64(&out, f.bytes);
    PutU64(&out, f.head);
  }
  PutU64(&out, Digest64(out));
  return WriteFileAtomically(path, out);
}

Result<CategoricalMapping> CategoricalMapping::Load(const std::string& path) {
  // Whole-file read: the file is 8 bytes per dictionary value, smaller than
  // the map it becomes, so streaming it would save nothing.
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  std::string_view all = *bytes;
  if (all.size() < sizeof kMagic + 16 || std::memcmp(all.data(), kMagic, sizeof kMagic) != 0) {
    return Status::InvalidArgument(path + ": not a categorical mapping file (bad magic or too short)");
  }
  Cursor trailer(all.substr(all.size() - 8));
  uint64_t stored = 0;
  trailer.U64(&stored);
  const std::string_view body = all.substr(0, all.size() - 8);
  if (Digest64(body) != stored) return Status::Corruption(path + ": checksum mismatch (the file is damaged)");

  Cursor in(body.substr(sizeof kMagic));
  const auto bad = [&](const std::string& what) { return Status::Corruption(path + ": " + what); };
  uint32_t version = 0, num_tables = 0;
  in.U32(&version);
  if (version == 1) {
    return Status::NotSupported(path + ": mapping format version 1 does not record which data it was built from, "
                                "so it cannot be checked against this data; delete it to rebuild it");
  }
  if (version != kVersion) {
    return Status::NotSupported(path + ": mapping format version " + std::to_string(version) +
                                ", this build reads version " + std::to_string(kVersion));
  }
  if (!in.U32(&num_tables)) return bad("truncated header");
  CategoricalMapping mapping;
  for (uint32_t i = 0; i < num_tables; ++i) {
    Table t;
    uint32_t name_len = 0;
    std::string_view name;
    uint8_t kind = 0;
    uint64_t num_keys = 0;
    if (!in.U32(&name_len) || !in.Bytes(name_len, &name) || !in.U8(&kind) || !in.U64(&t.rows) ||
        !in.U64(&t.min_count) || !in.U64(&num_keys)) {
      return bad("truncated table " + std::to_string(i));
    }
    t.name = name;
    if (kind == static_cast<uint8_t>(MappingKind::kHash)) {
      t.kind = MappingKind::kHash;
      if (t.rows < 2 || t.rows > kMaxRows || num_keys != 0) return bad("bad hash table " + t.name);
    } else if (kind == static_cast<uint8_t>(MappingKind::kDictionary)) {
      t.kind = MappingKind::kDictionary;
      if (num_keys + 2 != t.rows || t.rows > kMaxRows || in.left() / 8 < num_keys) {
        return bad("bad dictionary table " + t.name);
      }
      t.rows_of.Reserve(num_keys);
      for (uint64_t r = 0; r < num_keys; ++r) {
        uint64_t key = 0;
        in.U64(&key);
        RowId& row = t.rows_of[key];
        if (row != 0) return bad("duplicate key in table " + t.name);
        row = static_cast<RowId>(r + 2);
      }
    } else {
      return bad("unknown mapping kind " + std::to_string(kind) + " of table " + t.name);
    }
    mapping.tables_.push_back(std::move(t));
  }
  uint32_t num_sources = 0;
  if (!in.U32(&num_sources)) return bad("truncated source list");
  for (uint32_t i = 0; i < num_sources; ++i) {
    SourceFile f;
    uint32_t path_len = 0;
    std::string_view source_path;
    if (!in.U32(&path_len) || !in.Bytes(path_len, &source_path) || !in.U64(&f.bytes) || !in.U64(&f.head)) {
      return bad("truncated source " + std::to_string(i));
    }
    f.path = source_path;
    mapping.sources_.push_back(std::move(f));
  }
  if (in.left() != 0) return bad("trailing bytes after the source list");
  return mapping;
}

Status CategoricalMapping::CheckBuiltFrom(const std::vector<TableMappingSpec>& specs,
                                          const std::vector<SourceFile>& files) const {
  const auto differ = [](const std::string& what) { return Status::InvalidArgument(what); };
  if (specs.size() != tables_.size()) {
    return differ("it maps " + std::to_string(tables_.size()) + " tables, the data has " +
                  std::to_string(specs.size()));
  }
  const auto kind = [](MappingKind k) { return k == MappingKind::kHash ? "hash" : "dictionary"; };
  for (size_t i = 0; i < specs.size(); ++i) {
    const Table& t = tables_[i];
    const TableMappingSpec& want = specs[i];
    if (t.name != want.name) {
      return differ("its table " + std::to_string(i + 1) + " is '" + t.name + "', the data's is '" + want.name + "'");
    }
    if (t.kind != want.kind) {
      return differ(t.name + " is mapped by " + kind(t.kind) + " in it, the config says " + kind(want.kind));
    }
    if (t.kind == MappingKind::kHash && t.rows != want.hash_rows) {
      return differ(t.name + " hashes into " + std::to_string(t.rows) + " rows in it, the config says hash_rows = " +
                    std::to_string(want.hash_rows));
    }
    if (t.kind == MappingKind::kDictionary && t.min_count != want.min_count) {
      return differ(t.name + " was built with min_count = " + std::to_string(t.min_count) + ", the config says " +
                    std::to_string(want.min_count));
    }
  }
  // Hashing has no counting pass: any data maps the same way.
  const bool counted = std::any_of(tables_.begin(), tables_.end(),
                                   [](const Table& t) { return t.kind == MappingKind::kDictionary; });
  bool same = files.size() == sources_.size();
  for (size_t i = 0; same && i < files.size(); ++i) same = files[i].SameData(sources_[i]);
  if (!counted || same) return Status::Ok();
  const auto list = [](const std::vector<SourceFile>& fs) {
    std::string out;
    for (const auto& f : fs) out += (out.empty() ? "" : ", ") + Describe(f);
    return out.empty() ? std::string("no recorded file") : out;
  };
  return differ("it was built from " + list(sources_) + ", not from " + list(files));
}

Result<DictionaryBuilder> DictionaryBuilder::Create(std::vector<TableMappingSpec> specs) {
  std::set<std::string> names;
  for (const auto& s : specs) {
    if (!names.insert(s.name).second) return Status::InvalidArgument("table " + s.name + " is named twice");
    if (s.kind == MappingKind::kHash && (s.hash_rows < 2 || s.hash_rows > kMaxRows)) {
      return Status::InvalidArgument("table " + s.name + ": hash rows must be in [2, 2^32], got " +
                                     std::to_string(s.hash_rows));
    }
    if (s.kind == MappingKind::kDictionary && s.min_count < 1) {
      return Status::InvalidArgument("table " + s.name + ": min_count must be at least 1");
    }
  }
  return DictionaryBuilder(std::move(specs));
}

void DictionaryBuilder::Merge(DictionaryBuilder&& other) {
  ACTORREC_ASSERT(other.specs_.size() == specs_.size(), "merging counts of different tables");
  for (size_t t = 0; t < specs_.size(); ++t) {
    KeyMap<uint64_t>& into = counts_[t];
    if (into.size() < other.counts_[t].size()) std::swap(into, other.counts_[t]);  // walk the smaller map
    other.counts_[t].ForEach([&](uint64_t key, uint64_t count) { into[key] += count; });
    other.counts_[t] = KeyMap<uint64_t>();
  }
}

Result<CategoricalMapping> DictionaryBuilder::Finish() && {
  CategoricalMapping mapping;
  for (size_t i = 0; i < specs_.size(); ++i) {
    const TableMappingSpec& spec = specs_[i];
    CategoricalMapping::Table t;
    t.name = spec.name;
    t.kind = spec.kind;
    if (spec.kind == MappingKind::kHash) {
      t.rows = spec.hash_rows;
      t.min_count = 0;
    } else {
      t.min_count = spec.min_count;
      std::vector<std::pair<uint64_t, CategoryKey>> frequent;  // (count, key)
      counts_[i].ForEach([&](uint64_t key, uint64_t count) {
        if (count >= spec.min_count) frequent.emplace_back(count, key);
      });
      counts_[i] = KeyMap<uint64_t>();  // give the counts back before the rows grow
      std::sort(frequent.begin(), frequent.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      if (frequent.size() + 2 > kMaxRows) {
        return Status::InvalidArgument("table " + spec.name + ": " + std::to_string(frequent.size()) +
                                       " frequent values do not fit 32-bit row ids; raise min_count");
      }
      t.rows = frequent.size() + 2;
      t.rows_of.Reserve(frequent.size());
      for (size_t r = 0; r < frequent.size(); ++r) t.rows_of[frequent[r].second] = static_cast<RowId>(r + 2);
    }
    mapping.tables_.push_back(std::move(t));
  }
  return mapping;
}

}  // namespace actorrec::data::readers
