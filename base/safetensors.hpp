// Reading and writing float32 tensors in the safetensors format, so that
// embedding tables and dense parameters can be opened by Python
// (`safetensors.numpy.load_file`, `safetensors.torch.load_file`) and back.
//
// The format (https://github.com/huggingface/safetensors):
//   8 bytes   N: header length, u64 little-endian
//   N bytes   a JSON object, UTF-8, padded with spaces to a multiple of 8:
//             {"__metadata__":{"key":"value",...},
//              "name":{"dtype":"F32","shape":[d0,d1,...],"data_offsets":[begin,end]},...}
//   the rest  the data buffer: each tensor's elements, row-major,
//             little-endian, at [begin, end) relative to the buffer's start.
//
// What we write, byte for byte what Python's safetensors writes for the same
// F32 tensors: compact JSON (no spaces), "__metadata__" first and left out
// when empty, tensors sorted by name, keys in the order dtype, shape,
// data_offsets, data contiguous in that order, header padded with spaces.
//
// What we read: exactly that shape of header, strictly: any JSON whitespace,
// any key order and any tensor order, standard string escapes; but no other
// keys, no duplicate names, only "F32", non-negative integer shapes and
// offsets whose product matches, and offsets that tile the data buffer with
// neither gap nor overlap (what the Rust reference also demands). Every error
// names the file and, where there is one, the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"

namespace actorrec {

struct NamedTensor {
  std::string name;
  std::vector<uint64_t> shape;  // empty: a scalar (one element)
  std::vector<float> values;    // row-major; size() == product of shape

  uint64_t elements() const;  // the product of shape
};

struct SafetensorsFile {
  std::vector<NamedTensor> tensors;  // in the order of their data offsets
  std::map<std::string, std::string> metadata;

  // The tensor called `name`, or null.
  const NamedTensor* Find(const std::string& name) const;
};

// The header length limit. The Rust reference refuses headers above
// 100 MB; a header that large is a corrupt length field, not a real file.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// The file's exact bytes for `tensors` and `metadata` (what WriteSafetensors
// writes). InvalidArgument for an empty or duplicate name, a name
// "__metadata__", or values that do not match the shape.
Result<std::string> EncodeSafetensors(const std::vector<NamedTensor>& tensors,
                                      const std::map<std::string, std::string>& metadata);

// Parses the bytes of a safetensors file; `path` names it in errors.
Result<SafetensorsFile> DecodeSafetensors(std::string_view bytes, const std::string& path);

// Replaces `path` atomically (base/atomic_file.hpp) with the encoding above.
Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        const std::map<std::string, std::string>& metadata);

// Reads and validates the whole file at `path`.
Result<SafetensorsFile> ReadSafetensors(const std::string& path);

}  // namespace actorrec
