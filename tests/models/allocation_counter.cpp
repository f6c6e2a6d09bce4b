#include "allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<uint64_t> allocations{0};
}

namespace actorrec::models::testing {
uint64_t AllocationsSoFar() { return allocations.load(std::memory_order_relaxed); }
}  // namespace actorrec::models::testing

// The array and nothrow forms of libstdc++ call this one; the aligned forms
// are not replaced (and not counted).
void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
