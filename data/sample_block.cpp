// Appending sample ranges between blocks.
#include "data/sample_block.hpp"

#include "base/status.hpp"

namespace actorrec::data {

void SampleBlock::Append(const SampleBlock& other, size_t begin, size_t end) {
  ACTORREC_ASSERT(other.num_dense == num_dense && other.tables.size() == tables.size(), "blocks of different shape");
  ACTORREC_ASSERT(begin <= end && end <= other.size(), "sample range out of bounds");
  labels.insert(labels.end(), other.labels.begin() + begin, other.labels.begin() + end);
  dense.insert(dense.end(), other.dense.begin() + begin * num_dense, other.dense.begin() + end * num_dense);
  for (size_t t = 0; t < tables.size(); ++t) {
    const Table& src = other.tables[t];
    Table& dst = tables[t];
    const uint32_t first = src.offsets[begin];
    const uint32_t base = static_cast<uint32_t>(dst.values.size());
    dst.values.insert(dst.values.end(), src.values.begin() + first, src.values.begin() + src.offsets[end]);
    if (src.offsets.compact() && dst.offsets.compact() && dst.offsets.size() == size_t{base} + 1) {
      dst.offsets.SetSingleHot(dst.values.size());  // single-hot on both sides: nothing to write
      continue;
    }
    for (size_t i = begin + 1; i <= end; ++i) dst.offsets.push_back(base + (src.offsets[i] - first));
  }
}

}  // namespace actorrec::data
