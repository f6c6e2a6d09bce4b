// The batch_sampler's actor shell: credits in, batches out.
#include "actors/sampler/sampler_actor.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "messages/batch_codec.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStatsEvery = std::chrono::seconds(1);

struct SamplerState {
  static inline const char* name = "batch_sampler";
  std::unique_ptr<BatchSequence> sequence;
  SamplerArgs args;
  uint64_t credits = 0;
  uint64_t sent = 0;
  uint64_t samples_sent = 0;
  bool pumping = false;  // a pump_atom is in the mailbox
  bool ended = false;
  Clock::time_point started = Clock::now();
  Clock::time_point last_stats = Clock::now();
  data::Batch batch;  // reused: the one batch the sampler holds
};

using Self = Metered<caf::stateful_actor<SamplerState>>*;  // counted for the inspector (actor_meter.hpp)

void SendStats(Self self) {
  auto& st = self->state;
  if (!st.args.stats_sink) return;
  const double secs = std::chrono::duration<double>(Clock::now() - st.started).count();
  self->send(st.args.stats_sink, wire::Encode<wire::Stats>([&](wire::Stats::Builder b) {
    b.setActor("batch_sampler");
    b.setRole(wire::Role::SAMPLER);
    b.setBatch(static_cast<int64_t>(st.sent) - 1);
    auto stats = b.initStats(3);
    stats[0].setName("sampler.batches");
    stats[0].setValue(static_cast<double>(st.sent));
    stats[1].setName("sampler.samples_per_s");
    stats[1].setValue(secs > 0 ? st.samples_sent / secs : 0);
    stats[1].setUnit("samples/s");
    stats[2].setName("sampler.credits");
    stats[2].setValue(static_cast<double>(st.credits));
  }));
}

void End(Self self, const Status& status) {
  auto& st = self->state;
  st.ended = true;
  SendStats(self);
  if (status.ok()) {
    self->send(st.args.consumer, end_atom::value, st.sent);
  } else {
    spdlog::error("batch_sampler: {}", status.ToString());
    self->send(st.args.consumer, end_atom::value, st.sent, status.ToString());
  }
}

void Schedule(Self self) {
  auto& st = self->state;
  if (st.pumping || st.ended || st.credits == 0) return;
  st.pumping = true;
  self->send(self, pump_atom::value);
}

void Pump(Self self) {
  auto& st = self->state;
  st.pumping = false;
  if (st.ended || st.credits == 0) return;
  Status status = st.sequence->Next(&st.batch);
  if (!status.ok() || st.batch.samples.empty()) return End(self, status);
  if (st.args.dedup_groups.empty()) {
    self->send(st.args.consumer, wire::EncodeBatch(st.batch));
  } else {
    data::Ikjt ikjt = data::Deduplicate(st.batch.samples.tables, st.args.dedup_groups);
    self->send(st.args.consumer, wire::EncodeBatch(st.batch, &ikjt));
  }
  --st.credits;
  ++st.sent;
  st.samples_sent += st.batch.samples.size();
  if (Clock::now() - st.last_stats >= kStatsEvery) {
    st.last_stats = Clock::now();
    SendStats(self);
  }
  Schedule(self);
}

caf::behavior Sampler(Self self, SamplerArgs args) {
  auto& st = self->state;
  st.sequence = std::make_unique<BatchSequence>(args.source, args.options);
  st.args = std::move(args);
  self->set_default_handler(ReportUnexpected);
  return {
      [=](credit_atom, uint32_t n) {
        self->state.credits += n;
        Schedule(self);
      },
      [=](pump_atom) { Pump(self); },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnSampler(caf::actor_system& sys, SamplerArgs args) { return sys.spawn(Sampler, std::move(args)); }

}  // namespace actorrec
