#include "actors/embedding/shard_actor.hpp"

#include <caf/all.hpp>

#include <deque>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/embedding/write_back_ledger.hpp"
#include "messages/rows_codec.hpp"

namespace actorrec::embedding {
namespace {

struct PendingFetch {
  wire::RowFetchHeader header;
  wire::RowKeys keys;
  caf::actor reply_to;
};

struct ShardState {
  static inline const char* name = "embedding_shard";
  ShardActorArgs args;
  std::unique_ptr<WriteBackLedger> ledger;
  std::deque<PendingFetch> waiting;  // fetches whose barrier does not hold yet
  wire::RowPayload payload;          // reused decode target
};

using Self = Metered<caf::stateful_actor<ShardState>>*;  // counted for the inspector (actor_meter.hpp)

void Fail(Self self, const std::string& what) {
  self->send(self->state.args.errors, error_atom::value,
             "embedding shard " + std::to_string(self->state.args.store->shard()) + ": " + what);
}

void Serve(Self self, const PendingFetch& f) {
  ShardStore& store = *self->state.args.store;
  wire::RowsHeader h;
  h.request_id = f.header.request_id;
  h.batch = f.header.batch;
  h.dim = self->state.args.dim;
  h.state_width = store.format().floats() - h.dim;
  Status fill_status;
  auto rows = wire::EncodeRows(
      h, f.keys,
      [&](float* out) { return store.Fetch(f.keys.tables.data(), f.keys.rows.data(), f.keys.size(), out); },
      &fill_status);
  if (!fill_status.ok()) {
    return Fail(self, "fetch of batch " + std::to_string(f.header.batch) + " from trainer " +
                          std::to_string(f.header.trainer) + ": " + fill_status.message());
  }
  self->send(f.reply_to, std::move(rows));
}

void ServeAllowed(Self self) {
  auto& st = self->state;
  // Barriers grow with the batch and each partition fetches in batch order,
  // but several partitions interleave: serve every allowed one, keep the rest
  // in arrival order.
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (st.ledger->Allows(it->header.barrier)) {
      Serve(self, *it);
      it = st.waiting.erase(it);
    } else {
      ++it;
    }
  }
}

caf::behavior Shard(Self self, ShardActorArgs args) {
  self->state.args = std::move(args);
  self->state.ledger = std::make_unique<WriteBackLedger>(self->state.args.writers, self->state.args.first_batch);
  self->set_default_handler(ReportUnexpected);
  return {
      [=](const wire::Frame<wire::RowFetch>& frame) {
        PendingFetch f;
        if (Status st = wire::DecodeRowFetch(frame, &f.header, &f.keys); !st.ok()) return Fail(self, st.ToString());
        f.reply_to = caf::actor_cast<caf::actor>(self->current_sender());
        if (self->state.ledger->Allows(f.header.barrier)) {
          Serve(self, f);
        } else {
          self->state.waiting.push_back(std::move(f));
        }
      },
      [=](const wire::Frame<wire::WriteBack>& frame) {
        auto& st = self->state;
        ShardStore& store = *st.args.store;
        if (Status s = wire::DecodeWriteBack(frame, store.format().floats(), &st.payload); !s.ok()) {
          return Fail(self, s.ToString());
        }
        const auto& h = st.payload.header();
        const auto& keys = st.payload.keys();
        // The payload sits word-aligned in the message (wire.hpp): floats in place.
        const float* data = reinterpret_cast<const float*>(st.payload.bytes());
        if (Status s = store.Store(keys.tables.data(), keys.rows.data(), keys.size(), data); !s.ok()) {
          return Fail(self, "write-back of batch " + std::to_string(h.batch) + " from trainer " +
                                std::to_string(h.trainer) + ": " + s.message());
        }
        if (Status s = st.ledger->Record(h.trainer, h.batch); !s.ok()) return Fail(self, s.message());
        self->send(caf::actor_cast<caf::actor>(self->current_sender()),
                   wire::EncodeWriteBackAck({h.batch, h.trainer, h.partition, static_cast<uint32_t>(keys.size()),
                                             store.shard()}));
        ServeAllowed(self);
      },
      [=](peek_atom, const wire::Frame<wire::RowFetch>& frame) -> caf::result<wire::Frame<wire::Rows>> {
        const ShardStore& store = *self->state.args.store;
        wire::RowFetchHeader header;
        wire::RowKeys keys;
        if (Status st = wire::DecodeRowFetch(frame, &header, &keys); !st.ok()) {
          return caf::make_error(caf::sec::invalid_argument, st.ToString());
        }
        wire::RowsHeader h;
        h.request_id = header.request_id;
        h.dim = self->state.args.dim;
        h.state_width = store.format().floats() - h.dim;
        const size_t floats = store.format().floats();
        Status fill_status;
        auto rows = wire::EncodeRows(
            h, keys,
            [&](float* out) {
              for (size_t i = 0; i < keys.size(); ++i) {
                if (Status st = store.Peek(keys.tables[i], keys.rows[i], out + i * floats); !st.ok()) return st;
              }
              return Status::Ok();
            },
            &fill_status);
        if (!fill_status.ok()) {
          return caf::make_error(caf::sec::invalid_argument,
                                 "embedding shard " + std::to_string(store.shard()) + ": " + fill_status.message());
        }
        return rows;
      },
      [=](store_atom, const wire::Frame<wire::WriteBack>& frame) -> caf::result<ok_atom> {
        auto& st = self->state;
        ShardStore& store = *st.args.store;
        if (Status s = wire::DecodeWriteBack(frame, store.format().floats(), &st.payload); !s.ok()) {
          return caf::make_error(caf::sec::invalid_argument, s.ToString());
        }
        const auto& keys = st.payload.keys();
        const float* data = reinterpret_cast<const float*>(st.payload.bytes());
        if (Status s = store.Store(keys.tables.data(), keys.rows.data(), keys.size(), data); !s.ok()) {
          return caf::make_error(caf::sec::invalid_argument,
                                 "embedding shard " + std::to_string(store.shard()) + ": " + s.message());
        }
        return ok_atom::value;
      },
      [=](checkpoint_atom, const std::string& path, int64_t batch) -> caf::result<ok_atom> {
        const ShardStore& store = *self->state.args.store;
        if (Status s = store.SaveCheckpoint(path, batch); !s.ok()) {
          return caf::make_error(caf::sec::runtime_error,
                                 "embedding shard " + std::to_string(store.shard()) + ": " + s.message());
        }
        return ok_atom::value;
      },
      [=](position_atom) { return self->state.args.first_batch; },
      [=](digest_atom) { return self->state.args.store->Digest(); },
      [=](usage_atom) -> caf::result<uint64_t, uint64_t> {
        const ShardStore& store = *self->state.args.store;
        return {uint64_t{store.resident_rows()}, uint64_t{store.memory_bytes()}};
      },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnShardActor(caf::actor_system& sys, ShardActorArgs args) { return sys.spawn(Shard, std::move(args)); }

}  // namespace actorrec::embedding
