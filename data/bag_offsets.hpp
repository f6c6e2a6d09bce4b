// BagOffsets: the offsets of one table's bags in a SampleBlock. n bags have
// n + 1 offsets, offsets[0] = 0, and bag i is values[offsets[i],
// offsets[i + 1]).
//
// Single-hot data (one id in every bag, as in every Criteo table) has the
// offsets 0, 1, …, n, and writing them out was 104 of the 264 bytes a sample
// of a Criteo batch holds: a batch read from a file copied 160 bytes a
// sample and wrote 104 more. So BagOffsets has a compact form for them that
// stores nothing: a read returns i, and data() points into one table of
// 0, 1, 2, … shared by the whole process (read-only, built once). Any change
// other than appending one more single-id bag writes the offsets out first,
// so to its users it is the std::vector<uint32_t> it replaces; the readers,
// the batch codec and SampleBlock::Append keep single-hot tables compact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace actorrec::data {

class BagOffsets {
 public:
  // Bags up to which the compact form is kept; beyond, the offsets are
  // written out (the shared table holds kMaxCompactBags + 1 entries, 4 MiB).
  static constexpr size_t kMaxCompactBags = size_t{1} << 20;

  BagOffsets() = default;  // {0}: no bags
  BagOffsets(std::initializer_list<uint32_t> offsets) : explicit_(offsets), compact_(false) {}
  explicit BagOffsets(std::vector<uint32_t> offsets) : explicit_(std::move(offsets)), compact_(false) {}
  BagOffsets& operator=(std::initializer_list<uint32_t> offsets) {
    explicit_.assign(offsets);
    compact_ = false;
    return *this;
  }

  // The offsets of `bags` single-id bags, 0, 1, …, bags: compact when they
  // fit the shared table.
  void SetSingleHot(size_t bags);
  // Whether the offsets are in the compact form (so known to be 0, 1, …, n
  // without reading them).
  bool compact() const { return compact_; }

  size_t size() const { return compact_ ? bags_ + 1 : explicit_.size(); }
  bool empty() const { return size() == 0; }
  uint32_t operator[](size_t i) const { return compact_ ? static_cast<uint32_t>(i) : explicit_[i]; }
  uint32_t front() const { return (*this)[0]; }
  uint32_t back() const { return (*this)[size() - 1]; }
  const uint32_t* data() const { return compact_ ? SharedIota() : explicit_.data(); }
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + size(); }

  // Appends one offset; the compact form stays compact when it closes a bag
  // of one id (x == the bag count so far + 1).
  void push_back(uint32_t x) {
    if (compact_ && x == bags_ + 1 && bags_ < kMaxCompactBags) {
      ++bags_;
      return;
    }
    WriteOut();
    explicit_.push_back(x);
  }

  // The rest of std::vector's interface that users call; each writes the
  // offsets out first.
  using value_type = uint32_t;
  uint32_t& operator[](size_t i) { return WriteOut()[i]; }
  uint32_t& front() { return WriteOut().front(); }
  uint32_t& back() { return WriteOut().back(); }
  uint32_t* data() { return WriteOut().data(); }
  uint32_t* begin() { return data(); }
  uint32_t* end() { return data() + size(); }
  void resize(size_t n) { WriteOut().resize(n); }
  void resize(size_t n, uint32_t value) { WriteOut().resize(n, value); }
  void assign(size_t n, uint32_t value);
  template <class It>
  void assign(It first, It last) {
    compact_ = false;
    explicit_.assign(first, last);
  }
  // Inserting anywhere but at the end is not needed, so not offered.
  template <class It>
  void append(It first, It last) {
    WriteOut().insert(explicit_.end(), first, last);
  }
  void reserve(size_t n) {
    if (!compact_) explicit_.reserve(n);
  }
  void clear() {
    compact_ = false;
    explicit_.clear();
  }
  // Exchanges contents (capacities included), as std::vector::swap does.
  void swap(BagOffsets& other) noexcept {
    explicit_.swap(other.explicit_);
    std::swap(bags_, other.bags_);
    std::swap(compact_, other.compact_);
  }

  // By content: the compact form equals the same offsets written out.
  bool operator==(const BagOffsets& other) const;
  bool operator==(const std::vector<uint32_t>& offsets) const;

 private:
  // 0, 1, …, kMaxCompactBags: the compact form's data().
  static const uint32_t* SharedIota();
  // Turns the compact form into explicit offsets; returns them.
  std::vector<uint32_t>& WriteOut();

  std::vector<uint32_t> explicit_;  // the offsets when !compact_; empty, its capacity kept, when compact
  size_t bags_ = 0;                 // the bag count when compact_
  bool compact_ = true;
};

}  // namespace actorrec::data
