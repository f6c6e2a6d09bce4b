// DatasetStats as text for people (an aligned table) and for programs (JSON,
// written by hand: no JSON library in the dependency set).
#pragma once

#include <string>

#include "data/stats/dataset_stats.hpp"

namespace actorrec::data::stats {

// A header line with the totals, one aligned row per table, and a legend of
// the columns. Shares print as percentages; unknown values as "-".
std::string FormatTable(const DatasetStats& stats);

// One JSON object with every field of DatasetStats under its own name
// (snake_case); NaN (no model, no data) is written as null.
std::string ToJson(const DatasetStats& stats);

}  // namespace actorrec::data::stats
