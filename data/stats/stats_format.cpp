// Text and JSON renderings of DatasetStats.
#include "data/stats/stats_format.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/json_number.hpp"

namespace actorrec::data::stats {

namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// "0.1%" for 0.001, "1%" for 0.01.
std::string FractionLabel(double f) { return Printf("%g", f * 100.0) + "%"; }

std::string Percent(double share) { return std::isfinite(share) ? Printf("%.2f%%", share * 100.0) : "-"; }
std::string Fixed(double x, const char* format) { return std::isfinite(x) ? Printf(format, x) : "-"; }

// Left-aligns the first column, right-aligns the others, to each column's width.
std::string Align(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? row[c] + pad : "  " + pad + row[c];
    }
    out += line + "\n";
  }
  return out;
}

void JsonString(const std::string& s, std::string* out) {
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      *out += buffer;
    } else {
      *out += static_cast<char>(c);
    }
  }
  *out += '"';
}

std::string JsonArray(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + JsonNumber(values[i]);
  return out + "]";
}

}  // namespace

std::string FormatTable(const DatasetStats& stats) {
  std::string out = "samples " + std::to_string(stats.samples) + ", batches " + std::to_string(stats.batches) +
                    " of " + std::to_string(stats.batch_size) + ", positive rate " +
                    Fixed(stats.positive_rate, "%.4f");
  if (stats.session_length > 0) out += ", session length " + std::to_string(stats.session_length);
  out += "\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"table", "rows", "accesses", "distinct", "bag"};
  for (double f : stats.top_fractions) header.push_back("top" + FractionLabel(f));
  for (double f : stats.top_fractions) header.push_back("top" + FractionLabel(f) + "seen");
  for (const char* h : {"uniq/batch", "coalesce", "dedupe", "model"}) header.push_back(h);
  for (double f : stats.cache_fractions) header.push_back("hit@" + FractionLabel(f));
  rows.push_back(header);
  for (const TableStats& t : stats.tables) {
    std::vector<std::string> row = {t.name, std::to_string(t.rows), std::to_string(t.accesses),
                                    std::to_string(t.distinct_rows), Fixed(t.mean_bag_length, "%.2f")};
    for (double s : t.top_share_of_rows) row.push_back(Percent(s));
    for (double s : t.top_share_of_seen) row.push_back(Percent(s));
    row.push_back(Fixed(t.mean_unique_rows_per_batch, "%.1f"));
    row.push_back(Fixed(t.coalescing_ratio, "%.4f"));
    row.push_back(Fixed(t.dedupe_factor, "%.3f"));
    row.push_back(Fixed(t.dedupe_factor_model, "%.3f"));
    for (double h : t.cache_hit_rate) row.push_back(Percent(h));
    rows.push_back(row);
  }
  out += Align(rows);
  out +=
      "topF: share of accesses on the hottest F of the table's rows; topFseen: of the rows seen.\n"
      "uniq/batch: distinct rows per batch; coalesce: distinct rows / accesses, over all batches.\n"
      "dedupe: bags / distinct bags per batch (RecD's DedupeFactor); model: expected from sessions.\n"
      "hit@F: share of each batch's distinct rows in a static cache of the hottest F of rows.\n";
  return out;
}

std::string ToJson(const DatasetStats& stats) {
  std::string out = "{";
  out += "\"samples\": " + std::to_string(stats.samples);
  out += ", \"batches\": " + std::to_string(stats.batches);
  out += ", \"batch_size\": " + std::to_string(stats.batch_size);
  out += ", \"positive_rate\": " + JsonNumber(stats.positive_rate);
  out += ", \"session_length\": " + std::to_string(stats.session_length);
  out += ", \"top_fractions\": " + JsonArray(stats.top_fractions);
  out += ", \"cache_fractions\": " + JsonArray(stats.cache_fractions);
  out += ", \"tables\": [";
  for (size_t i = 0; i < stats.tables.size(); ++i) {
    const TableStats& t = stats.tables[i];
    out += i ? ", {\"name\": " : "{\"name\": ";
    JsonString(t.name, &out);
    out += ", \"rows\": " + std::to_string(t.rows);
    out += ", \"accesses\": " + std::to_string(t.accesses);
    out += ", \"bags\": " + std::to_string(t.bags);
    out += ", \"distinct_rows\": " + std::to_string(t.distinct_rows);
    out += ", \"mean_bag_length\": " + JsonNumber(t.mean_bag_length);
    out += ", \"top_share_of_rows\": " + JsonArray(t.top_share_of_rows);
    out += ", \"top_share_of_seen\": " + JsonArray(t.top_share_of_seen);
    out += ", \"mean_unique_rows_per_batch\": " + JsonNumber(t.mean_unique_rows_per_batch);
    out += ", \"coalescing_ratio\": " + JsonNumber(t.coalescing_ratio);
    out += ", \"dedupe_factor\": " + JsonNumber(t.dedupe_factor);
    out += ", \"dedupe_factor_model\": " + JsonNumber(t.dedupe_factor_model);
    out += ", \"cache_hit_rate\": " + JsonArray(t.cache_hit_rate);
    out += "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace actorrec::data::stats
