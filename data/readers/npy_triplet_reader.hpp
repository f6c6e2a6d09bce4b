// TorchRec's per-day NumPy triplets (torchrec.datasets.criteo, the output of
// its tsv_to_npys / scripts): day_N_dense.npy float32 [n, 13] (already
// log-transformed), day_N_sparse.npy int32 or int64 [n, 26],
// day_N_labels.npy int32, int64 or float32 [n] or [n, 1]. The three files of
// a day must agree on n. Read in chunks with pread, a few MiB at a time.
//
// File-level problems (a bad or unsupported header, a truncated file, shapes
// that disagree, an empty file) fail Open under both policies. Labels other
// than 0/1, non-finite dense values and ids outside [0, rows) are bad
// records named by file, 0-based sample index and byte offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::readers {

struct NpyDayFiles {
  std::string dense;
  std::string sparse;
  std::string labels;
};

// dir/day_N_dense.npy, dir/day_N_sparse.npy, dir/day_N_labels.npy.
NpyDayFiles TorchRecDayFiles(const std::string& dir, int day);

struct NpyTripletOptions {
  // One cardinality per sparse column.
  std::vector<uint64_t> table_rows;
  // TorchRec's in-memory Criteo pipe takes raw ids modulo the table size
  // (its `hashes` argument); true does the same. False: an id outside
  // [0, rows) is a bad record "row id out of range".
  bool modulo_rows = false;
};

// Dense names I1.., tables C1.. with the given rows.
Result<std::unique_ptr<SampleReader>> OpenNpyTriplets(std::vector<NpyDayFiles> days, NpyTripletOptions options,
                                                      BadRecordPolicy policy);

}  // namespace actorrec::data::readers
