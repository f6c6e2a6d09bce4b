// Per-value checks shared by the binary readers (DLRM .bin, NumPy), so both
// name the same reasons the same way.
#pragma once

#include <cstdint>
#include <string>

#include "data/sample_block.hpp"

namespace actorrec::data::readers {

// "path: sample 12 at byte 1920" (0-based index): where a binary record is.
inline std::string SampleWhere(const std::string& path, uint64_t sample, uint64_t byte_offset) {
  return path + ": sample " + std::to_string(sample) + " at byte " + std::to_string(byte_offset);
}

// A 0/1 label; false for anything else (the reason is "unknown label value").
inline bool LabelOf(double raw, float* label) {
  if (raw == 0.0 || raw == 1.0) {
    *label = static_cast<float>(raw);
    return true;
  }
  return false;
}

// `raw` as a row of a table with `rows` rows. With `modulo`, any id is
// taken modulo rows as Python/NumPy do (the result is never negative);
// without, ids outside [0, rows) fail (reason "row id out of range").
inline bool RowOf(int64_t raw, uint64_t rows, bool modulo, RowId* row) {
  if (modulo) {
    const auto m = static_cast<int64_t>(rows);
    *row = static_cast<RowId>(((raw % m) + m) % m);
    return true;
  }
  if (raw < 0 || static_cast<uint64_t>(raw) >= rows) return false;
  *row = static_cast<RowId>(raw);
  return true;
}

}  // namespace actorrec::data::readers
