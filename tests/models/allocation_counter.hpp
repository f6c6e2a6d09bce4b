// Counts calls of the global operator new (replaced in
// allocation_counter.cpp for the whole unit_tests binary; it forwards to
// malloc), so that a test can check that a code path allocates nothing.
#pragma once

#include <cstdint>

namespace actorrec::models::testing {

uint64_t AllocationsSoFar();

}  // namespace actorrec::models::testing
