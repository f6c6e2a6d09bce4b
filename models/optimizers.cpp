#include "models/optimizers.hpp"

#include <cmath>

#include "configs/row_state.hpp"

namespace actorrec::models {

OptimizerSettings DenseSettingsOf(const config::OptimizerConfig& c) {
  OptimizerSettings s;
  s.lr = static_cast<float>(c.dense_lr);
  s.beta1 = static_cast<float>(c.beta1);
  s.beta2 = static_cast<float>(c.beta2);
  s.eps = static_cast<float>(c.eps);
  s.initial_accumulator = static_cast<float>(c.initial_accumulator);
  return s;
}

OptimizerSettings SparseSettingsOf(const config::OptimizerConfig& c) {
  OptimizerSettings s = DenseSettingsOf(c);
  s.lr = static_cast<float>(c.sparse_lr);
  return s;
}

DenseOptimizer::DenseOptimizer(config::DenseOptimizer kind, OptimizerSettings settings, size_t params)
    : kind_(kind), s_(settings), n_(params) {
  switch (kind_) {
    case config::DenseOptimizer::kSgd:
      break;
    case config::DenseOptimizer::kAdagrad:
      state_.assign(n_, s_.initial_accumulator);
      break;
    case config::DenseOptimizer::kAdam:
      state_.assign(2 * n_ + 1, 0.0f);
      break;
  }
}

std::vector<TensorInfo> DenseOptimizer::state_tensors() const {
  auto piece = [](const char* name, size_t offset, size_t size) {
    return TensorInfo{name, {static_cast<int64_t>(size)}, offset, size};
  };
  switch (kind_) {
    case config::DenseOptimizer::kSgd: return {};
    case config::DenseOptimizer::kAdagrad: return {piece("adagrad.accumulator", 0, n_)};
    case config::DenseOptimizer::kAdam:
      return {piece("adam.m", 0, n_), piece("adam.v", n_, n_), piece("adam.step", 2 * n_, 1)};
  }
  return {};
}

void DenseOptimizer::Step(std::span<float> p, std::span<const float> g) {
  const float lr = s_.lr;
  switch (kind_) {
    case config::DenseOptimizer::kSgd:
      for (size_t i = 0; i < n_; ++i) p[i] -= lr * g[i];
      return;
    case config::DenseOptimizer::kAdagrad: {
      // Constants in locals and distinct buffers: the loop vectorizes (the
      // same operations in the same order per element, so the same bits).
      float* __restrict acc = state_.data();
      float* __restrict pp = p.data();
      const float* __restrict gg = g.data();
      const float eps = s_.eps;
      for (size_t i = 0; i < n_; ++i) {
        acc[i] += gg[i] * gg[i];
        pp[i] -= lr * gg[i] / (std::sqrt(acc[i]) + eps);
      }
      return;
    }
    case config::DenseOptimizer::kAdam: {
      float* __restrict m = state_.data();
      float* __restrict v = m + n_;
      float& step = state_[2 * n_];
      step += 1.0f;
      const float c1 = 1.0f - std::pow(s_.beta1, step);
      const float c2 = 1.0f - std::pow(s_.beta2, step);
      float* __restrict pp = p.data();
      const float* __restrict gg = g.data();
      const float beta1 = s_.beta1, beta2 = s_.beta2, eps = s_.eps;
      const float keep1 = 1.0f - beta1, keep2 = 1.0f - beta2;
      for (size_t i = 0; i < n_; ++i) {
        m[i] = beta1 * m[i] + keep1 * gg[i];
        v[i] = beta2 * v[i] + keep2 * gg[i] * gg[i];
        pp[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
      }
      return;
    }
  }
}

RowOptimizer::RowOptimizer(config::SparseOptimizer kind, OptimizerSettings settings, uint32_t width)
    : kind_(kind), s_(settings), width_(width), state_floats_(config::RowStateFloats(kind, width)) {}

void RowOptimizer::InitState(float* state) const {
  switch (kind_) {
    case config::SparseOptimizer::kSgd: return;
    case config::SparseOptimizer::kAdagrad:
      for (uint32_t j = 0; j < width_; ++j) state[j] = s_.initial_accumulator;
      return;
    case config::SparseOptimizer::kRowwiseAdagrad: state[0] = s_.initial_accumulator; return;
    case config::SparseOptimizer::kAdam:
      for (uint32_t j = 0; j < state_floats_; ++j) state[j] = 0.0f;
      return;
  }
}

void RowOptimizer::Apply(float* row, const float* g) const {
  const float lr = s_.lr;
  float* state = row + width_;
  switch (kind_) {
    case config::SparseOptimizer::kSgd:
      for (uint32_t j = 0; j < width_; ++j) row[j] -= lr * g[j];
      return;
    case config::SparseOptimizer::kAdagrad:
      for (uint32_t j = 0; j < width_; ++j) {
        state[j] += g[j] * g[j];
        row[j] -= lr * g[j] / (std::sqrt(state[j]) + s_.eps);
      }
      return;
    case config::SparseOptimizer::kRowwiseAdagrad: {
      // One accumulator per row: the mean of g² over the row (as FBGEMM).
      float sum = 0.0f;
      for (uint32_t j = 0; j < width_; ++j) sum += g[j] * g[j];
      state[0] += sum / static_cast<float>(width_);
      const float scale = lr / (std::sqrt(state[0]) + s_.eps);
      for (uint32_t j = 0; j < width_; ++j) row[j] -= scale * g[j];
      return;
    }
    case config::SparseOptimizer::kAdam: {
      float* m = state;
      float* v = state + width_;
      float& step = state[2 * width_];
      step += 1.0f;
      const float c1 = 1.0f - std::pow(s_.beta1, step);
      const float c2 = 1.0f - std::pow(s_.beta2, step);
      for (uint32_t j = 0; j < width_; ++j) {
        m[j] = s_.beta1 * m[j] + (1.0f - s_.beta1) * g[j];
        v[j] = s_.beta2 * v[j] + (1.0f - s_.beta2) * g[j] * g[j];
        row[j] -= lr * (m[j] / c1) / (std::sqrt(v[j] / c2) + s_.eps);
      }
      return;
    }
  }
}

}  // namespace actorrec::models
