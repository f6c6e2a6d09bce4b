// One column chunk: encoding it, and finding (and checking) the columns of a
// stored one in place. The byte layout is in layout.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "data/format/layout.hpp"
#include "data/sample_block.hpp"

namespace actorrec::data::format {

// Pointers into a stored chunk; valid while its bytes are.
struct ChunkView {
  struct Table {
    const uint32_t* offsets = nullptr;  // m + 1 of them; null for a single-hot table
    const RowId* values = nullptr;
    uint64_t num_values = 0;
  };
  uint32_t size = 0;  // m: samples in the chunk
  const float* labels = nullptr;
  const float* dense = nullptr;
  std::vector<Table> tables;
};

// Replaces *out with chunk `index` holding all of `block`: columns, padding
// and checksum. `block` is well-formed and its offsets start at 0.
void EncodeChunk(const SampleBlock& block, const std::vector<bool>& multi_hot, uint64_t index, std::string* out);

// Points *view at the columns of chunk `index` of the file `path`, whose
// bytes (checksum included) are `bytes`, 8-aligned. Bounds are always
// checked, so the view never points outside `bytes`. With `verify` the
// content is checked too: the checksum first ("checksum mismatch in chunk 7
// of FILE"), then labels (0 or 1) and dense values (finite), an
// InvalidArgument naming the sample, then offsets and row ids, which lookups
// downstream trust.
Status ParseChunk(std::string_view bytes, const HeaderInfo& header, uint64_t index, bool verify,
                  const std::string& path, ChunkView* view);

}  // namespace actorrec::data::format
