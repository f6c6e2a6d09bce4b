#include "actors/cache/cache_partition_actor.hpp"

#include <caf/all.hpp>

#include <cstring>
#include <map>
#include <unordered_map>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/embedding/shard_store.hpp"
#include "messages/plan_codec.hpp"
#include "messages/rows_codec.hpp"

namespace actorrec::trainer {
namespace {

struct OpenFetch {
  int64_t batch = 0;
  std::vector<uint32_t> slots;  // per key of the RowFetch, in order
};

struct WriteRound {
  wire::RowKeys keys;           // rows this trainer writes back after the batch
  std::vector<uint32_t> slots;
};

struct PartitionState {
  static inline const char* name = "cache_partition";
  CachePartitionArgs args;
  caf::actor trainer;
  uint64_t next_request = 0;
  std::unordered_map<uint64_t, OpenFetch> open;  // by request id
  std::map<int64_t, uint32_t> outstanding;       // batch -> fetches not yet answered
  std::map<int64_t, WriteRound> rounds;          // batch -> its write-back round, once planned
  std::map<int64_t, std::pair<uint32_t, uint64_t>> acks;  // batch -> (shards acked, rows)
  oracle::TrainerPlan plan;                      // reused decode target
  wire::RowPayload payload;
};

using Self = Metered<caf::stateful_actor<PartitionState>>*;  // counted for the inspector (actor_meter.hpp)

void Fail(Self self, const std::string& what) {
  auto& a = self->state.args;
  self->send(a.driver, error_atom::value,
             "cache partition " + std::to_string(a.partition) + " of trainer " + std::to_string(a.trainer) + ": " + what);
}

void Landed(Self self, int64_t batch) { self->send(self->state.trainer, landed_atom::value, batch); }

void OnPlan(Self self, const wire::Frame<wire::TrainerPlan>& frame) {
  auto& st = self->state;
  if (Status s = wire::DecodePlan(frame, &st.plan); !s.ok()) return Fail(self, s.ToString());
  const oracle::TrainerPlan& plan = st.plan;
  const uint32_t S = static_cast<uint32_t>(st.args.shards.size());
  const uint32_t capacity = st.args.cache->slots();

  // The write-back round of this batch: the evictions this trainer writes.
  WriteRound& round = st.rounds[plan.batch];
  for (const oracle::Eviction& e : plan.evictions) {
    if (e.writer != st.args.trainer) continue;
    round.keys.push_back(e.table, e.row);
    round.slots.push_back(e.slot);
  }

  // The fetches, one per shard holding any of the batch's missing rows.
  std::vector<wire::RowKeys> keys(S);
  std::vector<std::vector<uint32_t>> slots(S);
  for (const auto* list : {&plan.prefetch, &plan.private_prefetch}) {
    for (const oracle::RowSlot& r : *list) {
      if (r.slot >= capacity) {
        return Fail(self, "plan of batch " + std::to_string(plan.batch) + " names slot " + std::to_string(r.slot) +
                              " of a cache of " + std::to_string(capacity));
      }
      const uint32_t s = embedding::ShardOf(r.table, r.row, S);
      keys[s].push_back(r.table, r.row);
      slots[s].push_back(r.slot);
    }
  }
  uint32_t sent = 0;
  for (uint32_t s = 0; s < S; ++s) {
    if (keys[s].size() == 0) continue;
    wire::RowFetchHeader h;
    h.request_id = st.next_request++;
    h.batch = plan.batch;
    h.barrier = plan.barrier;
    h.trainer = st.args.trainer;
    h.partition = st.args.partition;
    st.open[h.request_id] = {plan.batch, std::move(slots[s])};
    self->send(st.args.shards[s], wire::EncodeRowFetch(h, keys[s]));
    ++sent;
  }
  if (sent == 0) return Landed(self, plan.batch);
  st.outstanding[plan.batch] = sent;
}

void OnRows(Self self, const wire::Frame<wire::Rows>& frame) {
  auto& st = self->state;
  if (Status s = wire::DecodeRows(frame, st.args.cache->row_floats(), &st.payload); !s.ok()) {
    return Fail(self, s.ToString());
  }
  auto it = st.open.find(st.payload.header().request_id);
  if (it == st.open.end() || it->second.slots.size() != st.payload.keys().size()) {
    return Fail(self, "rows for unknown request " + std::to_string(st.payload.header().request_id) + " of batch " +
                          std::to_string(st.payload.header().batch));
  }
  const auto& slots = it->second.slots;
  const int64_t batch = it->second.batch;
  st.args.cache->cache().FillRows(
      slots.data(), slots.size(), [&](size_t i, float* dst) { st.payload.CopyRow(i, dst); }, batch);
  st.open.erase(it);
  if (--st.outstanding[batch] == 0) {
    st.outstanding.erase(batch);
    Landed(self, batch);
  }
}

void OnWrite(Self self, int64_t batch) {
  auto& st = self->state;
  auto it = st.rounds.find(batch);
  if (it == st.rounds.end()) return Fail(self, "asked to write back batch " + std::to_string(batch) + ", never planned");
  const WriteRound& round = it->second;
  const uint32_t S = static_cast<uint32_t>(st.args.shards.size());
  const uint32_t floats = st.args.cache->row_floats();
  std::vector<wire::RowKeys> keys(S);
  std::vector<std::vector<uint32_t>> slots(S);
  for (size_t i = 0; i < round.slots.size(); ++i) {
    const uint32_t s = embedding::ShardOf(round.keys.tables[i], round.keys.rows[i], S);
    keys[s].push_back(round.keys.tables[i], round.keys.rows[i]);
    slots[s].push_back(round.slots[i]);
  }
  wire::RowsHeader h;
  h.batch = batch;
  h.trainer = st.args.trainer;
  h.partition = st.args.partition;
  h.dim = st.args.dim;
  h.state_width = floats - st.args.dim;
  for (uint32_t s = 0; s < S; ++s) {  // every shard gets its round, empty or not
    self->send(st.args.shards[s], wire::EncodeWriteBack(h, keys[s], [&](float* out) {
      st.args.cache->cache().VisitRows(slots[s].data(), slots[s].size(), [&](size_t i, const float* src) {
        std::memcpy(out + i * floats, src, floats * sizeof(float));
      });
    }));
  }
  st.acks[batch] = {0, 0};
  st.rounds.erase(it);
}

void OnAck(Self self, const wire::Frame<wire::WriteBackAck>& frame) {
  auto& st = self->state;
  wire::WriteBackAckInfo ack;
  if (Status s = wire::DecodeWriteBackAck(frame, &ack); !s.ok()) return Fail(self, s.ToString());
  auto it = st.acks.find(ack.batch);
  if (it == st.acks.end()) return Fail(self, "unexpected write-back ack of batch " + std::to_string(ack.batch));
  it->second.first += 1;
  it->second.second += ack.rows;
  if (it->second.first == st.args.shards.size()) {
    self->send(st.args.driver, acked_atom::value, st.args.trainer, ack.batch, it->second.second);
    st.acks.erase(it);
  }
}

caf::behavior Partition(Self self, CachePartitionArgs args) {
  self->state.args = std::move(args);
  self->set_default_handler(ReportUnexpected);
  return {
      [=](caf::actor trainer) { self->state.trainer = std::move(trainer); },
      [=](const wire::Frame<wire::TrainerPlan>& frame) { OnPlan(self, frame); },
      [=](const wire::Frame<wire::Rows>& frame) { OnRows(self, frame); },
      [=](write_atom, int64_t batch) { OnWrite(self, batch); },
      [=](const wire::Frame<wire::WriteBackAck>& frame) { OnAck(self, frame); },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnCachePartition(caf::actor_system& sys, CachePartitionArgs args) {
  return sys.spawn(Partition, std::move(args));
}

}  // namespace actorrec::trainer
