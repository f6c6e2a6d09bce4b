// Categorical mapping: raw categorical values -> contiguous row ids, per
// table, by hashing or by a frequency-thresholded dictionary, saved with the
// dataset so that evaluation data maps the same way.
//
// Row layout of every table (both kinds):
//   row 0          the value is missing (an empty field or the missing marker)
//   hashing        row 1 + XXH3-64(key) mod (rows - 1)
//   dictionary     row 1 is shared by values seen fewer than min_count times
//                  while counting, and by values never seen (evaluation
//                  data); frequent values get rows 2.. by descending count,
//                  then by ascending key, so the same data gives the same
//                  rows on any machine. rows = 2 + number of frequent values.
//
// Keys: a hex value (Criteo) is its 32-bit value, exact. A string value is
// its XXH3-64; two distinct strings of one table share a row only if their
// digests collide, about 1e-6 for the 6.7 M device_ip values of Avazu: far
// below the collisions that hashing into a fixed table size causes anyway.
//
// A CategoricalMapping is immutable once built and safe to share between
// threads; DictionaryBuilder is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/key_map.hpp"
#include "data/readers/mapping_source.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data::readers {

using CategoryKey = uint64_t;

inline CategoryKey KeyOfHex(uint32_t value) { return value; }
CategoryKey KeyOfString(std::string_view value);

inline constexpr RowId kMissingRow = 0;
inline constexpr RowId kRareRow = 1;

enum class MappingKind : uint8_t { kHash = 1, kDictionary = 2 };

// How one table is mapped.
struct TableMappingSpec {
  std::string name;
  MappingKind kind = MappingKind::kDictionary;
  uint64_t hash_rows = 0;  // kHash: the table size, >= 2 (missing + one)
  uint64_t min_count = 1;  // kDictionary: fewer sightings -> the rare row
};

class CategoricalMapping {
 public:
  // Every table hashed into its TableSchema::rows (each >= 2).
  static Result<CategoricalMapping> Hashing(const std::vector<TableSchema>& tables);

  // Reads a mapping written by Save(); a bad checksum is Corruption.
  static Result<CategoricalMapping> Load(const std::string& path);

  // Writes the mapping atomically (temporary + fsync + rename) with an
  // XXH3-64 checksum of its bytes. Deterministic: same mapping, same bytes.
  Status Save(const std::string& path) const;

  size_t num_tables() const { return tables_.size(); }
  const std::string& name(size_t table) const { return tables_[table].name; }
  MappingKind kind(size_t table) const { return tables_[table].kind; }
  // The table's cardinality: every Map() result is below it.
  uint64_t rows(size_t table) const { return tables_[table].rows; }
  // Names and cardinalities, for a DatasetSchema.
  std::vector<TableSchema> tables() const;

  // The files the mapping was built from (BuildMapping sets them; empty for
  // a mapping built otherwise, as Hashing()'s).
  const std::vector<SourceFile>& sources() const { return sources_; }
  void set_sources(std::vector<SourceFile> sources) { sources_ = std::move(sources); }
  // Ok if this mapping is what building from `files` with `specs` would
  // give; else InvalidArgument saying what differs: a table, how it is
  // mapped (kind, hash_rows, min_count) or, when a table is a dictionary,
  // the data (SourceFile::SameData).
  Status CheckBuiltFrom(const std::vector<TableMappingSpec>& specs, const std::vector<SourceFile>& files) const;

  RowId Map(size_t table, CategoryKey key) const {
    const Table& t = tables_[table];
    if (t.kind == MappingKind::kHash) return HashRow(key, t.rows);
    const RowId* row = t.rows_of.Find(key);
    return row != nullptr ? *row : kRareRow;
  }

 private:
  friend class DictionaryBuilder;
  struct Table {
    std::string name;
    MappingKind kind = MappingKind::kHash;
    uint64_t rows = 0;
    uint64_t min_count = 0;
    KeyMap<RowId> rows_of;  // dictionary only: key -> row (>= 2)
  };
  static RowId HashRow(CategoryKey key, uint64_t rows);

  std::vector<Table> tables_;
  std::vector<SourceFile> sources_;
};

// The counting pass of the dictionary: Add() every non-missing value of the
// training data, then Finish(). Hash tables ignore Add().
class DictionaryBuilder {
 public:
  // Checks the specs (hash_rows >= 2 and < 2^32, min_count >= 1, names unique).
  static Result<DictionaryBuilder> Create(std::vector<TableMappingSpec> specs);

  size_t num_tables() const { return specs_.size(); }
  const std::vector<TableMappingSpec>& specs() const { return specs_; }

  void Add(size_t table, CategoryKey key) {
    if (specs_[table].kind == MappingKind::kDictionary) ++counts_[table][key];
  }

  // Adds `other`'s counts (built from the same specs) to these: counting
  // files apart and merging gives the counts of counting them together.
  void Merge(DictionaryBuilder&& other);

  // Assigns the rows. Fails only if a table would reach 2^32 rows.
  Result<CategoricalMapping> Finish() &&;

 private:
  explicit DictionaryBuilder(std::vector<TableMappingSpec> specs) : specs_(std::move(specs)), counts_(specs_.size()) {}

  std::vector<TableMappingSpec> specs_;
  std::vector<KeyMap<uint64_t>> counts_;
};

}  // namespace actorrec::data::readers
