// Optimizers of the dense parameters and of embedding rows.
//
// Row optimizers keep their state inside the row, after the weights
// ([width weights][state_floats state]), so that a row travels with its
// state between shard and cache, and an update is the same arithmetic
// wherever it runs (a shard in no_cache mode, every cache replica
// otherwise): one function, RowOptimizer::Apply.
//
// Row Adam is lazy (sparse) Adam: a row's moments and step count advance
// only when the row gets a gradient, and bias correction uses the row's own
// step count, stored as a float (exact up to 2^24 updates of one row).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "configs/config.hpp"

namespace actorrec::models {

struct OptimizerSettings {
  float lr = 0.01f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float initial_accumulator = 0.0f;
};

OptimizerSettings DenseSettingsOf(const config::OptimizerConfig& c);
OptimizerSettings SparseSettingsOf(const config::OptimizerConfig& c);

class DenseOptimizer {
 public:
  DenseOptimizer(config::DenseOptimizer kind, OptimizerSettings settings, size_t params);
  // params -= update(grads), element by element in index order.
  void Step(std::span<float> params, std::span<const float> grads);
  // The optimizer's state (accumulators, moments, and Adam's step as the
  // last float), for checkpoints.
  std::span<float> state() { return state_; }

 private:
  config::DenseOptimizer kind_;
  OptimizerSettings s_;
  size_t n_;
  std::vector<float> state_;
};

class RowOptimizer {
 public:
  RowOptimizer(config::SparseOptimizer kind, OptimizerSettings settings, uint32_t width);
  uint32_t width() const { return width_; }
  uint32_t state_floats() const { return state_floats_; }
  uint32_t row_floats() const { return width_ + state_floats_; }
  void InitState(float* state) const;
  // Updates row (weights and state) in place with its summed gradient.
  void Apply(float* row, const float* grad) const;

 private:
  config::SparseOptimizer kind_;
  OptimizerSettings s_;
  uint32_t width_;
  uint32_t state_floats_;
};

}  // namespace actorrec::models
