// Row messages <-> Cap'n Proto, with structural validation on decode.
#include "messages/rows_codec.hpp"

#include <cstring>
#include <string>

namespace actorrec::wire {
namespace {

void SetKeys(const RowKeys& keys, capnp::List<RowKey>::Builder list) {
  for (unsigned i = 0; i < keys.size(); ++i) {
    list[i].setTable(keys.tables[i]);
    list[i].setRow(keys.rows[i]);
  }
}

Status GetKeys(capnp::List<RowKey>::Reader list, const char* kind, int64_t batch, RowKeys* keys) {
  keys->tables.resize(list.size());
  keys->rows.resize(list.size());
  for (unsigned i = 0; i < list.size(); ++i) {
    const uint64_t row = list[i].getRow();
    if (row > UINT32_MAX) {
      return Status::Corruption(std::string(kind) + " of batch " + std::to_string(batch) + ": key " +
                                std::to_string(i) + " has a row id above 2^32 - 1");
    }
    keys->tables[i] = list[i].getTable();
    keys->rows[i] = static_cast<data::RowId>(row);
  }
  return Status::Ok();
}

Status CheckPayload(const char* kind, const RowsHeader& h, size_t keys, size_t bytes, uint32_t expected_floats) {
  if (h.floats() != expected_floats) {
    return Status::Corruption(std::string(kind) + " of batch " + std::to_string(h.batch) + ": rows of " +
                              std::to_string(h.dim) + " + " + std::to_string(h.state_width) +
                              " floats, the receiver's rows have " + std::to_string(expected_floats));
  }
  if (bytes != keys * size_t{h.floats()} * sizeof(float)) {
    return Status::Corruption(std::string(kind) + " of batch " + std::to_string(h.batch) + ": " +
                              std::to_string(bytes) + " payload bytes for " + std::to_string(keys) + " rows of " +
                              std::to_string(h.floats()) + " floats");
  }
  return Status::Ok();
}

}  // namespace

Frame<RowFetch> EncodeRowFetch(const RowFetchHeader& header, const RowKeys& keys) {
  return Encode<RowFetch>([&](RowFetch::Builder b) {
    b.setRequestId(header.request_id);
    b.setBatch(header.batch);
    b.setBarrier(header.barrier);
    b.setTrainer(header.trainer);
    b.setPartition(header.partition);
    SetKeys(keys, b.initKeys(static_cast<unsigned>(keys.size())));
  });
}

Status DecodeRowFetch(const Frame<RowFetch>& frame, RowFetchHeader* header, RowKeys* keys) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  auto r = view->root();
  header->request_id = r.getRequestId();
  header->batch = r.getBatch();
  header->barrier = r.getBarrier();
  header->trainer = r.getTrainer();
  header->partition = r.getPartition();
  return GetKeys(r.getKeys(), "RowFetch", header->batch, keys);
}

Frame<Rows> EncodeRows(const RowsHeader& header, const RowKeys& keys, const std::function<Status(float*)>& fill,
                       Status* fill_status) {
  capnp::MallocMessageBuilder builder;
  auto b = builder.initRoot<Rows>();
  b.setRequestId(header.request_id);
  b.setBatch(header.batch);
  b.setDim(header.dim);
  b.setStateWidth(header.state_width);
  SetKeys(keys, b.initKeys(static_cast<unsigned>(keys.size())));
  auto data = b.initData(static_cast<unsigned>(keys.size() * header.floats() * sizeof(float)));
  // Data is word-aligned inside the segment, so it holds floats in place.
  *fill_status = fill(reinterpret_cast<float*>(data.begin()));
  return Seal<Rows>(builder);
}

Frame<WriteBack> EncodeWriteBack(const RowsHeader& header, const RowKeys& keys,
                                 const std::function<void(float*)>& fill) {
  capnp::MallocMessageBuilder builder;
  auto b = builder.initRoot<WriteBack>();
  b.setBatch(header.batch);
  b.setTrainer(header.trainer);
  b.setPartition(header.partition);
  b.setDim(header.dim);
  b.setStateWidth(header.state_width);
  SetKeys(keys, b.initKeys(static_cast<unsigned>(keys.size())));
  auto data = b.initData(static_cast<unsigned>(keys.size() * header.floats() * sizeof(float)));
  fill(reinterpret_cast<float*>(data.begin()));
  return Seal<WriteBack>(builder);
}

void RowPayload::CopyRow(size_t i, float* out) const {
  const size_t bytes = size_t{header_.floats()} * sizeof(float);
  std::memcpy(out, bytes_ + i * bytes, bytes);
}

Status DecodeRows(const Frame<Rows>& frame, uint32_t expected_floats, RowPayload* out) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  out->write_back_view_.reset();
  out->rows_view_.emplace(std::move(view).value());
  auto r = out->rows_view_->root();
  out->header_ = {};
  out->header_.request_id = r.getRequestId();
  out->header_.batch = r.getBatch();
  out->header_.dim = r.getDim();
  out->header_.state_width = r.getStateWidth();
  if (Status st = GetKeys(r.getKeys(), "Rows", out->header_.batch, &out->keys_); !st.ok()) return st;
  auto data = r.getData();
  out->bytes_ = data.begin();
  return CheckPayload("Rows", out->header_, out->keys_.size(), data.size(), expected_floats);
}

Status DecodeWriteBack(const Frame<WriteBack>& frame, uint32_t expected_floats, RowPayload* out) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  out->rows_view_.reset();
  out->write_back_view_.emplace(std::move(view).value());
  auto r = out->write_back_view_->root();
  out->header_ = {};
  out->header_.batch = r.getBatch();
  out->header_.trainer = r.getTrainer();
  out->header_.partition = r.getPartition();
  out->header_.dim = r.getDim();
  out->header_.state_width = r.getStateWidth();
  if (Status st = GetKeys(r.getKeys(), "WriteBack", out->header_.batch, &out->keys_); !st.ok()) return st;
  auto data = r.getData();
  out->bytes_ = data.begin();
  return CheckPayload("WriteBack", out->header_, out->keys_.size(), data.size(), expected_floats);
}

Frame<WriteBackAck> EncodeWriteBackAck(const WriteBackAckInfo& ack) {
  return Encode<WriteBackAck>([&](WriteBackAck::Builder b) {
    b.setBatch(ack.batch);
    b.setTrainer(ack.trainer);
    b.setPartition(ack.partition);
    b.setRows(ack.rows);
    b.setShard(ack.shard);
  });
}

Status DecodeWriteBackAck(const Frame<WriteBackAck>& frame, WriteBackAckInfo* out) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  auto r = view->root();
  *out = {r.getBatch(), r.getTrainer(), r.getPartition(), r.getRows(), r.getShard()};
  return Status::Ok();
}

}  // namespace actorrec::wire
