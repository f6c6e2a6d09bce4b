// Encoding and decoding of the row messages (messages/rows.capnp): the only
// code that touches the generated RowFetch, Rows, WriteBack and WriteBackAck
// accessors.
//
// Row payloads are written straight into the message's Data field by a fill
// callback and read straight from it, so a row crosses from shard storage to
// cache slot with one copy on each side.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "base/status.hpp"
#include "data/sample_block.hpp"
#include "messages/kinds.hpp"

namespace actorrec::wire {

// Rows named by parallel arrays: (tables[i], rows[i]).
struct RowKeys {
  std::vector<uint32_t> tables;
  std::vector<data::RowId> rows;
  size_t size() const { return rows.size(); }
  void clear() {
    tables.clear();
    rows.clear();
  }
  void push_back(uint32_t table, data::RowId row) {
    tables.push_back(table);
    rows.push_back(row);
  }
};

struct RowFetchHeader {
  uint64_t request_id = 0;
  int64_t batch = 0;
  int64_t barrier = -1;
  uint32_t trainer = 0;
  uint32_t partition = 0;
};

Frame<RowFetch> EncodeRowFetch(const RowFetchHeader& header, const RowKeys& keys);
// Corruption naming the field when a row id does not fit data::RowId.
Status DecodeRowFetch(const Frame<RowFetch>& frame, RowFetchHeader* header, RowKeys* keys);

// What a Rows or WriteBack message says besides its keys and payload.
struct RowsHeader {
  uint64_t request_id = 0;  // Rows only
  int64_t batch = 0;
  uint32_t trainer = 0;     // WriteBack only
  uint32_t partition = 0;   // WriteBack only
  uint32_t dim = 0;
  uint32_t state_width = 0;
  uint32_t floats() const { return dim + state_width; }
};

// fill(out) writes keys.size() × header.floats() floats into out.
Frame<Rows> EncodeRows(const RowsHeader& header, const RowKeys& keys, const std::function<Status(float*)>& fill,
                       Status* fill_status);
Frame<WriteBack> EncodeWriteBack(const RowsHeader& header, const RowKeys& keys,
                                 const std::function<void(float*)>& fill);

// A decoded Rows or WriteBack: its keys, and row i's floats, read in place
// from the frame (which must outlive this object).
class RowPayload {
 public:
  const RowsHeader& header() const { return header_; }
  const RowKeys& keys() const { return keys_; }
  // Copies row i (header().floats() floats) to out.
  void CopyRow(size_t i, float* out) const;
  // The whole payload, keys().size() × floats() floats, unaligned.
  const unsigned char* bytes() const { return bytes_; }

 private:
  friend Status DecodeRows(const Frame<Rows>&, uint32_t, RowPayload*);
  friend Status DecodeWriteBack(const Frame<WriteBack>&, uint32_t, RowPayload*);
  RowsHeader header_;
  RowKeys keys_;
  std::optional<View<Rows>> rows_view_;
  std::optional<View<WriteBack>> write_back_view_;
  const unsigned char* bytes_ = nullptr;
};

// Both check that the payload holds exactly keys × (dim + stateWidth) floats
// and that dim + stateWidth == expected_floats (the receiver's row format),
// else Corruption naming the batch and the sizes.
Status DecodeRows(const Frame<Rows>& frame, uint32_t expected_floats, RowPayload* out);
Status DecodeWriteBack(const Frame<WriteBack>& frame, uint32_t expected_floats, RowPayload* out);

struct WriteBackAckInfo {
  int64_t batch = 0;
  uint32_t trainer = 0;
  uint32_t partition = 0;
  uint32_t rows = 0;
  uint32_t shard = 0;
};
Frame<WriteBackAck> EncodeWriteBackAck(const WriteBackAckInfo& ack);
Status DecodeWriteBackAck(const Frame<WriteBackAck>& frame, WriteBackAckInfo* out);

}  // namespace actorrec::wire
