#include "models/init.hpp"

#include <cmath>

#include "data/gen/random.hpp"

namespace actorrec::models {

void InitRowWeights(uint64_t seed, uint32_t table, uint64_t row, uint64_t table_rows, uint32_t embedding_dim,
                    uint32_t width, float* out) {
  const double bound = std::sqrt(1.0 / static_cast<double>(table_rows == 0 ? 1 : table_rows));
  data::gen::Rng rng(data::gen::HashPair(data::gen::HashPair(seed ^ 0x656d6265646469ULL, table), row));
  for (uint32_t k = 0; k < embedding_dim; ++k) out[k] = static_cast<float>((2.0 * rng.Uniform() - 1.0) * bound);
  for (uint32_t k = embedding_dim; k < width; ++k) out[k] = 0.0f;
}

}  // namespace actorrec::models
