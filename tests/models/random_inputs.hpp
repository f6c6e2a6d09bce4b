// A random slice for a model's tests: dense features N(0, 1), labels 0/1,
// pooled embeddings N(0, 0.25), from (seed) alone.
#pragma once

#include <vector>

#include "data/gen/random.hpp"
#include "models/model.hpp"

namespace actorrec::models {

struct Inputs {
  size_t n = 0;
  std::vector<float> dense, labels, pooled;
  SliceView view() const { return {n, dense.data(), labels.data()}; }
};

inline Inputs RandomInputs(const Model& m, size_t n, uint64_t seed) {
  data::gen::Rng rng(data::gen::HashPair(seed, 99));
  Inputs in;
  in.n = n;
  for (size_t i = 0; i < n * m.spec().dense_features; ++i) in.dense.push_back(static_cast<float>(rng.Normal()));
  for (size_t i = 0; i < n; ++i) in.labels.push_back(rng.Below(2) ? 1.0f : 0.0f);
  for (size_t i = 0; i < n * m.spec().pooled_tables() * m.embedding_width(); ++i) {
    in.pooled.push_back(static_cast<float>(0.5 * rng.Normal()));
  }
  return in;
}

}  // namespace actorrec::models
