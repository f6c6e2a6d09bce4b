// The libFM text format (Rendle's libFM; the FM datasets of Frappe and
// MovieLens in the NFM/AFM papers): one sample per line,
//   label feature:value feature:value …            (positional fields)
//   label field:feature:value field:feature:value … (with field ids, as libffm)
// separated by spaces or tabs. The label is a number: > 0 is a click (1),
// anything else is not (0), so both 1/0 and 1/−1 files read as expected.
//
// Every feature is a categorical id with value 1 (one-hot), one table per
// field: without field ids, the k-th feature of a line belongs to table k,
// and every line has exactly `fields` features (as the Frappe and MovieLens
// files do); with field ids, each field 0 … fields−1 appears at most once and
// a field that is absent is a missing value. A real-valued feature (value
// other than 1) is a bad record: dense features are not read from libFM
// files (dataset.dense_features = 0).
#pragma once

#include <cstddef>
#include <memory>

#include "data/readers/text_format.hpp"

namespace actorrec::data::readers {

struct LibfmOptions {
  size_t fields = 0;      // tables
  bool field_ids = false; // field:feature:value instead of feature:value
};

std::unique_ptr<TextFormat> LibfmFormat(const LibfmOptions& options);

}  // namespace actorrec::data::readers
