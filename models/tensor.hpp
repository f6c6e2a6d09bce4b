// A named piece of one contiguous float buffer: how a model's parameters (and
// an optimizer's state) are laid out for checkpoints and for inspection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace actorrec::models {

struct TensorInfo {
  std::string name;            // e.g. "bottom_mlp.0.weight"
  std::vector<int64_t> shape;  // row-major; a linear layer's weight is [out, in], as nn.Linear
  size_t offset = 0;           // into the buffer (params() / grads(), or an optimizer's state())
  size_t size = 0;             // product of shape
};

}  // namespace actorrec::models
