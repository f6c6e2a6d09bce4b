// Criteo TSV: the Display Advertising Challenge (Kaggle train.txt) and the
// Terabyte click logs (day_0 .. day_23), one sample per line:
//   label \t I1 .. I13 \t C1 .. C26      (40 fields)
// label 0 or 1; I* decimal integers, possibly negative, empty = missing;
// C* 32-bit values as hex digits (8 in the real files), empty = missing.
// Dense values become log(1 + max(x, 0)), missing 0, as in the DLRM
// reference; categorical values are keyed by their 32-bit value.
#pragma once

#include <memory>

#include "data/readers/text_format.hpp"

namespace actorrec::data::readers {

inline constexpr size_t kCriteoDense = 13;
inline constexpr size_t kCriteoTables = 26;

// Dense names I1..I13, tables C1..C26; no header.
std::unique_ptr<TextFormat> CriteoTsvFormat();

}  // namespace actorrec::data::readers
