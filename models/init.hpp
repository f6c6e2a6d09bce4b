// The initial weights of embedding row (t, r), from (seed, t, r) alone, so
// that a shard can create a row lazily, on any machine, the first time it
// is fetched: uniform in ±sqrt(1 / table_rows) for the embedding floats (the
// DLRM reference's initialization), 0 for a first-order weight.
#pragma once

#include <cstdint>

namespace actorrec::models {

void InitRowWeights(uint64_t seed, uint32_t table, uint64_t row, uint64_t table_rows, uint32_t embedding_dim,
                    uint32_t width, float* out);

}  // namespace actorrec::models
