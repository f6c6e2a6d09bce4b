// ComputeStats: one pass over a reader, cut into batches.
#include "data/stats/dataset_stats.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <string>

#include "data/stats/dedupe_model.hpp"
#include "data/stats/table_counter.hpp"

namespace actorrec::data::stats {

namespace {

Status CheckOptions(const StatsOptions& o, const DatasetSchema& schema) {
  auto bad = [](const std::string& what) { return Status::InvalidArgument("stats options: " + what); };
  if (o.batch_size < 1) return bad("batch_size must be >= 1");
  if (o.read_samples < 1) return bad("read_samples must be >= 1");
  for (double f : o.top_fractions)
    if (!(f > 0.0 && f <= 1.0)) return bad("top fractions must be in (0, 1]");
  for (double f : o.cache_fractions)
    if (!(f > 0.0 && f <= 1.0)) return bad("cache fractions must be in (0, 1]");
  if (o.session_length > 0) {
    if (o.session_dup_prob.size() != schema.num_tables())
      return bad("session_dup_prob needs one value per table (" + std::to_string(schema.num_tables()) + ")");
    for (double d : o.session_dup_prob)
      if (!(d >= 0.0 && d <= 1.0)) return bad("session_dup_prob must be in [0, 1]");
  }
  uint64_t rows = 0;
  for (const auto& t : schema.tables) rows += t.rows;
  if (rows * 8 > o.max_count_bytes)
    return Status::NotSupported("stats: counting " + std::to_string(rows) + " rows needs " +
                                std::to_string(rows * 8) + " bytes, above max_count_bytes");
  return Status::Ok();
}

// Checks one block against the schema where it is used: a reader is a peer.
Status CheckBlock(const SampleBlock& block, const DatasetSchema& schema, uint64_t first_sample) {
  const std::string where = "stats: block at sample " + std::to_string(first_sample) + ": ";
  if (block.tables.size() != schema.num_tables()) return Status::InvalidArgument(where + "wrong table count");
  for (size_t t = 0; t < block.tables.size(); ++t) {
    const auto& table = block.tables[t];
    if (table.offsets.size() != block.size() + 1 || table.offsets.back() != table.values.size())
      return Status::InvalidArgument(where + "table '" + schema.tables[t].name + "' has inconsistent offsets");
    const auto max = std::max_element(table.values.begin(), table.values.end());
    if (max != table.values.end() && *max >= schema.tables[t].rows)
      return Status::InvalidArgument(where + "table '" + schema.tables[t].name + "' has row " +
                                     std::to_string(*max) + " >= rows " + std::to_string(schema.tables[t].rows));
  }
  return Status::Ok();
}

}  // namespace

Result<DatasetStats> ComputeStats(SampleReader& reader, const StatsOptions& options) {
  const DatasetSchema& schema = reader.schema();
  Status status = CheckOptions(options, schema);
  if (!status.ok()) return status;

  std::vector<TableCounter> counters;
  counters.reserve(schema.num_tables());
  for (const auto& t : schema.tables) counters.emplace_back(t.rows);

  DatasetStats stats;
  uint64_t positives = 0;
  uint64_t batch_first = 0;  // the current batch's first sample
  auto end_batch = [&](uint64_t end) {
    for (size_t t = 0; t < counters.size(); ++t) {
      const double expected =
          options.session_length > 0
              ? ExpectedUniqueBags(batch_first, end - batch_first, options.session_length, options.session_dup_prob[t])
              : 0.0;
      counters[t].EndBatch(expected);
    }
    ++stats.batches;
    batch_first = end;
  };

  SampleBlock block;
  for (;;) {
    size_t ask = options.read_samples;
    if (options.max_samples > 0) ask = static_cast<size_t>(std::min<uint64_t>(ask, options.max_samples - stats.samples));
    if (ask == 0) break;
    status = reader.Next(ask, &block);
    if (!status.ok()) return status;
    if (block.empty()) break;
    status = CheckBlock(block, schema, stats.samples);
    if (!status.ok()) return status;
    for (float label : block.labels) positives += label > 0.5f;

    // Table by table within each batch's part of the block: one table's
    // counts and sets stay in cache for the whole run.
    for (size_t begin = 0; begin < block.size();) {
      const uint64_t sample = stats.samples + begin;
      const size_t end = static_cast<size_t>(
          std::min<uint64_t>(block.size(), begin + (batch_first + options.batch_size - sample)));
      for (size_t t = 0; t < counters.size(); ++t) {
        const auto& table = block.tables[t];
        for (size_t i = begin; i < end; ++i)
          counters[t].AddBag(std::span<const RowId>(table.values.data() + table.offsets[i],
                                                    table.offsets[i + 1] - table.offsets[i]));
      }
      if (stats.samples + end - batch_first == options.batch_size) end_batch(stats.samples + end);
      begin = end;
    }
    stats.samples += block.size();
    // Batch counts per row are uint32.
    if (stats.batches >= std::numeric_limits<uint32_t>::max())
      return Status::NotSupported("stats: more than 2^32 - 1 batches; use a larger batch_size");
  }
  if (stats.samples > batch_first) end_batch(stats.samples);

  stats.batch_size = options.batch_size;
  stats.positive_rate = stats.samples ? static_cast<double>(positives) / static_cast<double>(stats.samples) : 0.0;
  stats.session_length = options.session_length;
  stats.top_fractions = options.top_fractions;
  stats.cache_fractions = options.cache_fractions;
  for (size_t t = 0; t < counters.size(); ++t) {
    stats.tables.push_back(counters[t].Finish(options));
    stats.tables.back().name = schema.tables[t].name;
  }
  return stats;
}

}  // namespace actorrec::data::stats
