// ZeroedArray<T>: a large zero-filled array for per-row state, backed by
// anonymous memory with transparent huge pages requested.
//
// Why: the oracle's per-row state is direct-indexed by row id (hundreds of
// MB for Criteo-sized tables) and read at random. With 4 KiB pages nearly
// every access also misses the TLB; with 2 MiB pages the TLB covers the
// array. Pages are zero until first written, so untouched rows cost no
// memory. Where huge pages are unavailable the hint is ignored.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/status.hpp"

namespace actorrec::oracle {

template <class T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>, "all-zero bytes must be a valid T");

 public:
  explicit ZeroedArray(size_t n) {
    constexpr size_t kHugePage = size_t{2} << 20;
    // Over-allocate by one huge page so that the array can start on a huge
    // page boundary.
    mapped_ = (n * sizeof(T) + 2 * kHugePage - 1) / kHugePage * kHugePage;
    base_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ACTORREC_ASSERT(base_ != MAP_FAILED, "out of address space for the oracle's per-row state");
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(base_) + kHugePage - 1) / kHugePage * kHugePage;
    data_ = reinterpret_cast<T*>(aligned);
    madvise(data_, mapped_ - kHugePage, MADV_HUGEPAGE);  // a hint: failure only costs speed
  }
  ~ZeroedArray() { munmap(base_, mapped_); }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;

  T* get() const { return data_; }
  T& operator[](size_t i) const { return data_[i]; }

 private:
  void* base_ = nullptr;
  size_t mapped_ = 0;
  T* data_ = nullptr;
};

}  // namespace actorrec::oracle
