// Optimizers of the dense parameters and of embedding rows.
//
// Dense: sgd, adagrad (per-element accumulator), adam (bias-corrected with
// the optimizer's own step count, which is part of its state).
//
// Rows keep their optimizer state inside the row, after the weights
// ([width weights][state_floats state]), so that a row travels with its
// state between shard and cache, and an update is the same arithmetic
// wherever it runs (a shard in no_cache mode, every cache replica
// otherwise): one function, RowOptimizer::Apply. State per kind:
//   sgd              none
//   adagrad          [width] per-element accumulators of g²
//   rowwise_adagrad  [1] one accumulator += mean over the row of g² (FBGEMM's
//                    EXACT_ROWWISE_ADAGRAD), the first-order weight included
//   adam             [width] m, [width] v, [1] the row's step count
// Row Adam is lazy (sparse) Adam: a row's moments and step count advance
// only when the row gets a gradient, and bias correction uses the row's own
// step count, stored as a float: exact up to 2^24 (16.7 M) updates of one
// row, after which it stops growing (x + 1 == x) and the correction stays at
// its limit 1 − β^t ≈ 1, which is harmless. The dense step count is a float
// at the end of state() for the same reason (one layout for checkpoints).
//
// Update formulas (PyTorch's, with ε outside the square root):
//   adagrad  acc += g²;  w −= lr·g / (√acc + ε)
//   adam     m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;
//            w −= lr·(m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
// Every loop runs in index order; results depend only on the inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "configs/config.hpp"
#include "models/tensor.hpp"

namespace actorrec::models {

struct OptimizerSettings {
  float lr = 0.01f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float initial_accumulator = 0.0f;  // adagrad and rowwise_adagrad
};

// [optimizer] dense_lr or sparse_lr, with the shared betas, eps and
// initial_accumulator.
OptimizerSettings DenseSettingsOf(const config::OptimizerConfig& c);
OptimizerSettings SparseSettingsOf(const config::OptimizerConfig& c);

class DenseOptimizer {
 public:
  DenseOptimizer(config::DenseOptimizer kind, OptimizerSettings settings, size_t params);
  // params -= update(grads), element by element in index order. Both spans
  // hold the `params` floats given at construction.
  void Step(std::span<float> params, std::span<const float> grads);
  // The optimizer's state, for checkpoints: adagrad [params] accumulators;
  // adam [params] m, [params] v, then the step count; sgd empty.
  std::span<float> state() { return state_; }
  // Names the pieces of state(): "adagrad.accumulator", "adam.m", "adam.v",
  // "adam.step" (shape [1]).
  std::vector<TensorInfo> state_tensors() const;
  config::DenseOptimizer kind() const { return kind_; }

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
  config::SparseOptimizer kind() const { return kind_; }
  const OptimizerSettings& settings() const { return s_; }
  // Writes a fresh row's state_floats() floats (accumulators at
  // initial_accumulator, Adam's moments and step at 0).
  void InitState(float* state) const;
  // Updates row (row_floats(): weights, then state) in place with its summed
  // gradient (width() floats).
  void Apply(float* row, const float* grad) const;

 private:
  config::SparseOptimizer kind_;
  OptimizerSettings s_;
  uint32_t width_;
  uint32_t state_floats_ = 0;
};

}  // namespace actorrec::models
