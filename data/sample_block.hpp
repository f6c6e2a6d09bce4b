// SampleBlock: a run of samples in columnar form. Readers and the generator
// produce it, the columnar file format stores it, batches are cut from it.
//
// Layout: labels[i]; dense[i * num_dense + j]; for each table t, sample i's
// bag of row ids is tables[t].values[offsets[i] .. offsets[i + 1]). Criteo-
// style data has exactly one id per table per sample (a bag of one); missing
// values are mapped to a row of their own by the preprocessing, never dropped.
//
// Row ids are 32-bit: every table has fewer than 2^32 rows (the largest
// public tables, Criteo Terabyte hashed to 40 M, fit with room to spare), and
// halving the id width halves what the oracle and the sampler move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/bag_offsets.hpp"

namespace actorrec::data {

using RowId = uint32_t;

struct TableSchema {
  std::string name;   // e.g. "C1", "site_id", "workclass"
  uint64_t rows = 0;  // cardinality: ids are in [0, rows)
  bool operator==(const TableSchema&) const = default;
};

// What a dataset holds, independent of where it came from.
struct DatasetSchema {
  std::vector<std::string> dense_names;  // e.g. "I1".."I13"
  std::vector<TableSchema> tables;
  size_t num_dense() const { return dense_names.size(); }
  size_t num_tables() const { return tables.size(); }
  bool operator==(const DatasetSchema&) const = default;
};

struct SampleBlock {
  struct Table {
    BagOffsets offsets;  // size() + 1 entries; compact while every bag holds one id
    std::vector<RowId> values;
    // Ends the bag whose ids were appended to `values` since the last one.
    void CloseBag() { offsets.push_back(static_cast<uint32_t>(values.size())); }
    // Appends a bag holding exactly `row` (single-hot data).
    void AppendSingle(RowId row) {
      values.push_back(row);
      CloseBag();
    }
    bool operator==(const Table&) const = default;
  };

  uint32_t num_dense = 0;
  std::vector<float> labels;
  std::vector<float> dense;
  std::vector<Table> tables;

  size_t size() const { return labels.size(); }
  bool empty() const { return labels.empty(); }

  // Empties the block and shapes it for `schema`, keeping capacity.
  void Reset(const DatasetSchema& schema) { Reset(static_cast<uint32_t>(schema.num_dense()), schema.num_tables()); }
  void Reset(uint32_t dense_count, size_t table_count) {
    num_dense = dense_count;
    labels.clear();
    dense.clear();
    tables.resize(table_count);
    for (auto& t : tables) {
      t.offsets.SetSingleHot(0);
      t.values.clear();
    }
  }

  // Appends samples [begin, end) of `other` (same shape) to this block.
  void Append(const SampleBlock& other, size_t begin, size_t end);

  bool operator==(const SampleBlock&) const = default;
};

}  // namespace actorrec::data
