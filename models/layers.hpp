// The building blocks the four models share: a fixed-order dot product, the
// numerically stable BCE-with-logits loss, and a multi-layer perceptron whose
// GEMMs go through gpu::Backend.
//
// Determinism: every sum runs in an order fixed by the code (never by
// threads, vector width or the compiler), so a model's output depends only
// on its inputs. Dot() spells its order out (eight interleaved partial
// sums), which is also what lets the compiler vectorize it without
// -ffast-math: a plain `s += a[k] * b[k]` loop is one serial dependency
// chain, measured 3x slower at 128 floats (DLRM's interaction).
//
// Allocation: buffers grow to the largest slice seen and are then reused,
// so steady-state training allocates nothing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/buffer.hpp"
#include "gpu/cpu_ops.hpp"

namespace actorrec::models {

using gpu::cpu::Dot;  // gpu/cpu_ops.hpp: the fixed-order dot product

// BCE with logits and the MLP's element-wise steps: one definition, the
// CPU's, in gpu/cpu_ops.hpp (the CPU backend's model ops run them; the CUDA
// kernels' host tests compare with them under these names too).
using gpu::cpu::AddBias;
using gpu::cpu::BceWithLogits;
using gpu::cpu::BiasGrad;
using gpu::cpu::ReluGrad;

// Grows *v to at least n floats; never shrinks (no reallocation once the
// largest slice has been seen).
inline void Grow(std::vector<float>* v, size_t n) {
  if (v->size() < n) v->resize(n);
}

// A linear layer's place in the parameter buffer: weight [out, in] at w,
// bias [out] at b.
struct Linear {
  int in = 0, out = 0;
  size_t w = 0, b = 0;
};

// Linear layers, each followed by ReLU except the last unless relu_last.
// Forward keeps the activations for Backward; the input pointer must stay
// valid in between. Every pointer is in the backend's memory (host memory
// for the CPU backend), and so are the activations.
class Mlp {
 public:
  Mlp() = default;
  Mlp(std::vector<Linear> layers, bool relu_last) : layers_(std::move(layers)), relu_last_(relu_last) {}

  bool empty() const { return layers_.empty(); }
  int out_width() const { return layers_.back().out; }
  // n × out_width() of the last Forward.
  const float* output() const { return acts_.back().data(); }

  // x: n × layers[0].in, row-major.
  void Forward(gpu::Backend& be, const float* params, const float* x, size_t n);
  // dy: the gradient of the output (n × out_width()). Overwrites the layers'
  // parameter gradients in grads and, when dx is not null, writes the input
  // gradient (n × in); the first layer's input GEMM is skipped otherwise.
  void Backward(gpu::Backend& be, const float* params, float* grads, const float* dy, size_t n, float* dx);

  // GEMM FLOPs per sample of Forward + Backward (2 per multiply-add), with
  // or without the first layer's input gradient.
  double FlopsPerSample(bool input_grad) const;

 private:
  std::vector<Linear> layers_;
  bool relu_last_ = false;
  const float* input_ = nullptr;
  std::vector<gpu::Buffer> acts_;
  gpu::Buffer grad_[2];
};

// Declares the tensors "<name>.<l>.weight" [out, in] and "<name>.<l>.bias"
// [out] of an MLP of the given widths over `in` inputs. add(name, shape,
// is_bias) returns the tensor's offset.
template <class Add>
std::vector<Linear> DeclareMlp(Add&& add, const std::string& name, int in, const std::vector<int>& widths) {
  std::vector<Linear> layers;
  for (size_t l = 0; l < widths.size(); ++l) {
    Linear layer;
    layer.in = in;
    layer.out = widths[l];
    const std::string prefix = std::string(name).append(".").append(std::to_string(l));
    layer.w = add(std::string(prefix).append(".weight"), std::vector<int64_t>{layer.out, layer.in}, false);
    layer.b = add(std::string(prefix).append(".bias"), std::vector<int64_t>{layer.out}, true);
    layers.push_back(layer);
    in = layer.out;
  }
  return layers;
}

}  // namespace actorrec::models
