// BagOffsets' compact form and its shared table of 0, 1, 2, ….
#include "data/bag_offsets.hpp"

#include <algorithm>
#include <numeric>

namespace actorrec::data {

const uint32_t* BagOffsets::SharedIota() {
  static const std::vector<uint32_t> iota = [] {
    std::vector<uint32_t> v(kMaxCompactBags + 1);
    std::iota(v.begin(), v.end(), uint32_t{0});
    return v;
  }();
  return iota.data();
}

void BagOffsets::SetSingleHot(size_t bags) {
  if (bags <= kMaxCompactBags) {
    compact_ = true;
    bags_ = bags;
    explicit_.clear();  // keeps the capacity; a copy of the compact form copies no stale offsets
    return;
  }
  compact_ = false;
  explicit_.resize(bags + 1);
  std::iota(explicit_.begin(), explicit_.end(), uint32_t{0});
}

std::vector<uint32_t>& BagOffsets::WriteOut() {
  if (compact_) {
    explicit_.assign(SharedIota(), SharedIota() + bags_ + 1);
    compact_ = false;
  }
  return explicit_;
}

void BagOffsets::assign(size_t n, uint32_t value) {
  compact_ = false;
  explicit_.assign(n, value);
}

bool BagOffsets::operator==(const BagOffsets& other) const {
  if (compact_ && other.compact_) return bags_ == other.bags_;
  return size() == other.size() && std::equal(begin(), end(), other.begin());
}

bool BagOffsets::operator==(const std::vector<uint32_t>& offsets) const {
  return size() == offsets.size() && std::equal(begin(), end(), offsets.begin());
}

}  // namespace actorrec::data
