#include "actors/oracle/oracle_actor.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "actors/oracle/batch_rows.hpp"
#include "actors/oracle/plan_stats.hpp"
#include "actors/oracle/direct_planner.hpp"
#include "actors/oracle/planner.hpp"
#include "base/logging.hpp"
#include "messages/batch_codec.hpp"
#include "messages/plan_codec.hpp"

namespace actorrec::oracle {
namespace {

struct OracleState {
  static inline const char* name = "oracle";
  OracleActorArgs args;
  std::unique_ptr<PlanMaker> planner;
  std::unique_ptr<BatchRowsBuilder> builder;
  caf::actor sampler;
  std::deque<data::Batch> pending;  // pushed to the planner, not yet planned
  std::vector<int64_t> settled;     // per trainer: batches settled (first_batch + count)
  bool requested = false;           // a credit is out at the sampler
  bool data_ended = false;
  bool end_sent = false;
  std::string reported;             // the lookahead report the driver has (it grows when a window ends early)
  bool failed = false;
  data::Ikjt ikjt;                  // the last batch's, as the sampler sent it
  BatchPlan plan;                   // reused
  PlanStats stats;                  // of every plan sent
};

using Self = Metered<caf::stateful_actor<OracleState>>*;  // counted for the inspector (actor_meter.hpp)

void Fail(Self self, const std::string& what) {
  self->state.failed = true;
  self->send(self->state.args.driver, error_atom::value, "oracle: " + what);
}

// The planner's failures are all about capacity (the batches' shapes and row
// ids were checked before it saw them): training.cache_rows is too small.
void FailCapacity(Self self, const Status& s) {
  self->state.failed = true;
  self->send(self->state.args.driver, error_atom::value, config_atom::value,
             "oracle: training.cache_rows: " + s.message());
}

void SendPlan(Self self, const data::Batch& batch) {
  auto& st = self->state;
  const uint32_t W = st.args.options.trainers;
  const uint32_t n = static_cast<uint32_t>(batch.samples.size());
  data::Batch slice;
  for (uint32_t w = 0; w < W; ++w) {
    const SampleRange range = SliceOf(n, W, w);
    slice.epoch = batch.epoch;
    slice.index = batch.index;
    slice.first_sample = batch.first_sample + range.begin;
    slice.trainer = w;
    slice.slice_begin = range.begin;
    slice.slice_end = range.end;
    // Labels and dense features only: the plan carries the sparse features as slots.
    slice.samples.Reset(batch.samples.num_dense, 0);
    const size_t d = batch.samples.num_dense;
    slice.samples.labels.assign(batch.samples.labels.begin() + range.begin, batch.samples.labels.begin() + range.end);
    slice.samples.dense.assign(batch.samples.dense.begin() + range.begin * d, batch.samples.dense.begin() + range.end * d);
    auto plan = wire::EncodePlan(st.plan.ForTrainer(w));
    self->send(st.args.partitions[w], plan);
    self->send(st.args.trainers[w], std::move(plan), wire::EncodeBatch(slice), uint64_t{n});
  }
}

void Pump(Self self) {
  auto& st = self->state;
  if (st.failed || !st.sampler) return;
  const int64_t slowest = *std::min_element(st.settled.begin(), st.settled.end());
  while (st.planner->Ready()) {
    const int64_t b = static_cast<int64_t>(st.planner->next_batch());
    if (b > st.args.hold || b >= slowest + st.args.plans_ahead) break;
    if (Status s = st.planner->PlanNext(&st.plan); !s.ok()) return FailCapacity(self, s);
    st.stats.Add(st.plan);
    if (const std::string& now = st.planner->lookahead_report(); st.reported != now) {
      if (!st.reported.empty()) {
        // What changed: the report's parts ("; "-separated) from the first
        // that differs (a window that ended early, and the L after it).
        const auto differ = std::mismatch(st.reported.begin(), st.reported.end(), now.begin(), now.end()).second;
        const size_t from = now.rfind("; ", static_cast<size_t>(differ - now.begin()));
        spdlog::warn("oracle: {}", from == std::string::npos ? now : now.substr(from + 2));
      }
      st.reported = now;
      self->send(st.args.driver, report_atom::value, st.reported);
    }
    SendPlan(self, st.pending.front());
    st.pending.pop_front();
  }
  if (!st.data_ended && !st.requested && st.planner->CanPush()) {
    st.requested = true;
    self->send(st.sampler, credit_atom::value, uint32_t{1});
  }
  if (st.planner->Done() && !st.end_sent) {
    st.end_sent = true;
    self->send(st.args.driver, end_atom::value, st.planner->next_batch());
  }
}

void OnBatch(Self self, const wire::Frame<wire::Batch>& frame) {
  auto& st = self->state;
  st.requested = false;
  data::Batch batch;
  if (Status s = wire::DecodeBatch(frame, &batch, &st.ikjt); !s.ok()) return Fail(self, s.ToString());
  BatchRows rows = st.planner->RecycledRows();
  if (Status s = st.builder->Build(batch.samples, st.args.options.trainers, &rows, &st.ikjt); !s.ok()) {
    return Fail(self, s.ToString());
  }
  if (!st.planner->CanPush()) return Fail(self, "a batch arrived that was not asked for");
  if (Status s = st.planner->Push(std::move(rows)); !s.ok()) return FailCapacity(self, s);
  st.pending.push_back(std::move(batch));
  Pump(self);
}

void OnEnd(Self self) {
  auto& st = self->state;
  st.data_ended = true;
  if (Status s = st.planner->Finish(); !s.ok()) return FailCapacity(self, s);
  Pump(self);
}

caf::behavior Oracle(Self self, OracleActorArgs args) {
  auto& st = self->state;
  st.args = std::move(args);
  st.planner = MakePlanMaker(st.args.options, st.args.direct ? &*st.args.direct : nullptr);
  st.builder = std::make_unique<BatchRowsBuilder>(st.args.options.table_rows);
  st.builder->SetDedupGroups(st.args.dedup_groups);
  st.stats = PlanStats(st.args.row_bytes, st.args.direct.has_value());
  st.settled.assign(st.args.options.trainers, static_cast<int64_t>(st.args.options.first_batch));
  self->set_default_handler(ReportUnexpected);
  return {
      [=](const std::vector<caf::actor>& trainers, caf::actor sampler) {
        if (trainers.size() != self->state.args.options.trainers) {
          return Fail(self, "started with " + std::to_string(trainers.size()) + " trainers, planning for " +
                                std::to_string(self->state.args.options.trainers));
        }
        self->state.args.trainers = trainers;
        self->state.sampler = std::move(sampler);
        Pump(self);
      },
      [=](const wire::Frame<wire::Batch>& frame) { OnBatch(self, frame); },
      [=](end_atom, uint64_t) { OnEnd(self); },
      [=](end_atom, uint64_t, const std::string& error) { Fail(self, error); },
      [=](settled_atom, uint32_t trainer, int64_t batch) {
        auto& s = self->state;
        if (trainer < s.settled.size()) s.settled[trainer] = std::max(s.settled[trainer], batch + 1);
        Pump(self);
      },
      [=](hold_atom, int64_t last) {
        self->state.args.hold = last;
        Pump(self);
      },
      [=](hold_atom) {
        auto& s = self->state;
        s.args.hold = std::min(s.args.hold, static_cast<int64_t>(s.planner->next_batch()) - 1);
        return s.args.hold;
      },
      [=](stats_atom) { return caf::make_message(self->state.stats.Summary(), self->state.stats.ToJson()); },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnOracleActor(caf::actor_system& sys, OracleActorArgs args) {
  return sys.spawn(Oracle, std::move(args));
}

}  // namespace actorrec::oracle
