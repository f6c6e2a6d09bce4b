// Dataset statistics (what `actorrec data stats` prints): per table, how
// skewed the accesses are, how much a batch coalesces, how much RecD-style
// deduplication would save, and what a static cache of the hottest rows
// would hit. Streams any SampleReader once.
//
// Batches are runs of batch_size consecutive samples of the stream, in
// stream order; the last, partial batch counts as a batch.
//
// Memory: 8 bytes per row of every table (a uint32 access count and a uint32
// count of batches that touched the row; 270 MB for Criteo Kaggle's 33.76 M
// rows), plus per-batch sets sized by the batch. ComputeStats refuses, with
// NotSupported, a schema that would need more than max_count_bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::stats {

struct StatsOptions {
  uint64_t batch_size = 4096;
  // Shares of accesses taken by the hottest fraction f of rows.
  std::vector<double> top_fractions = {0.001, 0.01};
  // Static caches holding the hottest fraction f of each table's rows.
  std::vector<double> cache_fractions = {0.001, 0.01, 0.1};
  // Stop after this many samples; 0 reads the whole stream.
  uint64_t max_samples = 0;
  // Samples asked of the reader at a time: memory for one block, nothing more.
  size_t read_samples = 65536;
  uint64_t max_count_bytes = uint64_t{8} << 30;

  // RecD's session model, when the data's session structure is known (the
  // generator's session_length and GeneratorOptions::SessionDupProbs()):
  // session_length 0 means unknown, and no modelled DedupeFactor.
  uint32_t session_length = 0;
  std::vector<double> session_dup_prob;  // one per table
};

struct TableStats {
  std::string name;
  uint64_t rows = 0;          // cardinality, from the schema
  uint64_t accesses = 0;      // ids read, over all bags
  uint64_t bags = 0;          // = samples
  uint64_t distinct_rows = 0; // rows accessed at least once
  double mean_bag_length = 0;
  // Per StatsOptions::top_fractions, the share of accesses taken by the k
  // hottest rows, for k = ceil(f * rows) (of the cardinality: what a cache
  // sized by the table sees) and for k = ceil(f * distinct_rows) (of the rows
  // seen: independent of how generously the table was sized).
  std::vector<double> top_share_of_rows;
  std::vector<double> top_share_of_seen;
  // Distinct rows per batch, averaged, and the coalescing ratio: distinct
  // rows over accesses, summed over batches (1 = nothing coalesces).
  double mean_unique_rows_per_batch = 0;
  double coalescing_ratio = 0;
  // RecD's DedupeFactor: bags over distinct bags, summed over batches
  // (measured), and its model from the session structure (NaN if unknown).
  // Bags compare by content, through a 64-bit hash for multi-hot bags.
  double dedupe_factor = 0;
  double dedupe_factor_model = 0;
  // Per StatsOptions::cache_fractions, the share of each batch's distinct
  // rows found in a static cache of the k = ceil(f * rows) rows hottest over
  // the whole stream (ties broken towards lower row ids), summed over batches.
  std::vector<double> cache_hit_rate;
};

struct DatasetStats {
  uint64_t samples = 0;
  uint64_t batches = 0;
  uint64_t batch_size = 0;
  double positive_rate = 0;  // labels > 0.5
  uint32_t session_length = 0;
  std::vector<double> top_fractions;
  std::vector<double> cache_fractions;
  std::vector<TableStats> tables;
};

// Reads `reader` to its end (or options.max_samples). Fails with the
// reader's status, with InvalidArgument for options out of range or a
// sample that does not fit the schema (a row id past the table), or with
// NotSupported when the counts would exceed options.max_count_bytes.
Result<DatasetStats> ComputeStats(SampleReader& reader, const StatsOptions& options = {});

}  // namespace actorrec::data::stats
