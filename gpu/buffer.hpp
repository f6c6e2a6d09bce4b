// A grow-only buffer of floats in a backend's memory (gpu::Backend::Allocate):
// what a device-resident model keeps its activations and gradients in.
//
// Grow keeps nothing of the old contents: every user overwrites what it
// grew. Buffers grow to the largest slice seen, so steady-state training
// allocates nothing. Not thread-safe (one trainer's).
#pragma once

#include <cstddef>
#include <utility>

#include "gpu/backend.hpp"

namespace actorrec::gpu {

class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~Buffer() {
    if (data_ != nullptr) backend_->Free(data_);
  }

  // At least `floats` of be's memory (a buffer stays with its first backend).
  float* Grow(Backend& be, size_t floats) {
    if (floats > size_ || data_ == nullptr) {
      if (data_ != nullptr) backend_->Free(data_);
      data_ = nullptr;
      backend_ = &be;
      data_ = be.Allocate(floats == 0 ? 1 : floats);
      size_ = floats;
    }
    return data_;
  }
  float* data() const { return data_; }

  // `host` (floats of them) as the backend sees it: the host pointer itself
  // where the backend's memory is the host's, else a copy uploaded into
  // this buffer.
  const float* Resident(Backend& be, const float* host, size_t floats) {
    if (!be.device_memory()) return host;
    float* at = Grow(be, floats);
    if (floats > 0) be.Upload(at, host, floats);
    return at;
  }

 private:
  Backend* backend_ = nullptr;
  float* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace actorrec::gpu
