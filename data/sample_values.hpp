// The rule for a sample's label and dense values, shared by every reader,
// the dataset writer and the dataset file's chunk check: a label is 0 or 1,
// a dense value is finite. A NaN or an infinity fed to a model turns every
// parameter it touches into NaN within a batch, so no path lets one in.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace actorrec::data {

inline bool IsLabel(float x) { return x == 0.0f || x == 1.0f; }

// The index of the first non-finite value of v[0, n), or -1. Branch-free
// over the exponent bits (all ones: NaN or infinity), so the common case of
// none vectorizes and costs a pass at memory speed.
inline long FirstNonFinite(const float* v, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= (std::bit_cast<uint32_t>(v[i]) & 0x7f800000u) == 0x7f800000u;
  if (any == 0) return -1;
  for (size_t i = 0; i < n; ++i) {
    if ((std::bit_cast<uint32_t>(v[i]) & 0x7f800000u) == 0x7f800000u) return static_cast<long>(i);
  }
  return -1;
}

// A float as a message shows it ("nan", "inf", "-inf", "2").
inline std::string ValueText(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string s = std::to_string(x);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace actorrec::data
