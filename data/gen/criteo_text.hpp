// Criteo TSV text from samples: what Criteo Kaggle's train.txt and Criteo
// Terabyte's day files hold (label, 13 integer counts, 26 categorical values
// as 8 hex digits, tab-separated), written gzip-compressed as the Terabyte
// days ship, so the MLPerf DLRM recipe (days 0–22 train, day 23 eval) can be
// tried end to end on generated data of known Bayes-optimal AUC.
//
// A sample comes back through the criteo_tsv reader as it went in: dense
// value x (the generator's log1p of a count) is written as the count
// round(expm1(x)), which the reader turns back into log1p(count); row r of
// table t is written as the 32-bit value r·0x9E3779B1 + t·0x7F4A7C15 + 1
// (mod 2^32; one value per row, since the factor is odd), which a dictionary
// maps back to one row per value.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "data/sample_block.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::gen {

inline constexpr size_t kCriteoTextDense = 13;
inline constexpr size_t kCriteoTextTables = 26;

// Appends one line per sample of `block`, which must have 13 dense features
// and 26 tables of exactly one id a sample (InvalidArgument otherwise).
Status AppendCriteoLines(const SampleBlock& block, std::string* out);

// Reads `samples` samples of `source` (fewer if it ends) into `path`,
// gzip-compressed, atomically (PATH.tmp, then renamed). The gzip stream
// carries no time stamp: the same samples give the same bytes.
Result<uint64_t> WriteCriteoGzip(SampleReader& source, uint64_t samples, const std::string& path);

}  // namespace actorrec::data::gen
