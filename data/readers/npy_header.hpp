// NpyHeader: the header of a NumPy .npy file (format versions 1.0, 2.0 and
// 3.0), enough to read C-ordered little-endian numeric arrays.
//
// Layout: "\x93NUMPY", major, minor, header length (uint16 LE in 1.0,
// uint32 LE in 2.0 and 3.0), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 13), }
// padded with spaces to a 64-byte boundary; the data follows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {

enum class NpyType { kFloat32, kInt32, kInt64 };

struct NpyHeader {
  NpyType type = NpyType::kFloat32;
  size_t item_bytes = 0;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;  // where the array's bytes start
  uint64_t elements() const;
};

// "float32 [1000, 13]" for messages.
std::string Describe(const NpyHeader& header);

// Parses the header at the start of `bytes` (at least the whole header).
// Big-endian or other dtypes and fortran_order True are NotSupported; a
// malformed header is InvalidArgument. Messages name `path`.
Result<NpyHeader> ParseNpyHeader(const std::string& path, std::string_view bytes);

// Reads and parses the header of `file`, and checks that the file holds
// exactly the data the shape promises (less is Corruption: truncated).
Result<NpyHeader> ReadNpyHeader(const ReadFile& file);

}  // namespace actorrec::data::readers
