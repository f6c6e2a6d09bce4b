#include "actors/sync/sync_scheduler_actor.hpp"

#include <caf/all.hpp>

#include <chrono>

#include "actors/common/actor_meter.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"

namespace actorrec::trainer {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct SchedulerState {
  static inline const char* name = "sync_scheduler";
  SyncSchedulerArgs args;
  std::unique_ptr<gpu::Collective> collective;
  double delayed_end_s = 0;  // when the last delayed sync finished
  bool broken = false;
};

using Self = Metered<caf::stateful_actor<SchedulerState>>*;  // counted for the inspector (actor_meter.hpp)

// Runs one job: `sum` (the collective's call) with its timing and errors;
// false when the collective is (or just became) broken.
template <class Sum>
bool RunJob(Self self, int64_t batch, uint8_t kind, double sent_s, double* behind, Sum&& sum) {
  auto& st = self->state;
  if (st.broken) return false;
  *behind = kind == static_cast<uint8_t>(SyncKind::kCritical) && st.delayed_end_s > sent_s
                ? st.delayed_end_s - sent_s
                : 0.0;
  if (Status s = sum(*st.collective); !s.ok()) {
    st.broken = true;
    self->send(st.args.driver, error_atom::value,
               "sync scheduler of trainer " + std::to_string(st.args.rank) + ", batch " + std::to_string(batch) +
                   ": " + s.ToString());
    return false;
  }
  if (kind == static_cast<uint8_t>(SyncKind::kDelayed)) st.delayed_end_s = NowSeconds();
  return true;
}

caf::behavior Scheduler(Self self, SyncSchedulerArgs args) {
  auto& st = self->state;
  st.args = std::move(args);
  self->set_default_handler(ReportUnexpected);
  // Blocks until every rank's scheduler has arrived (or the timeout).
  auto connected = st.args.connect();
  if (!connected.ok()) {
    st.broken = true;
    self->send(st.args.driver, error_atom::value,
               "sync scheduler of trainer " + std::to_string(st.args.rank) + ": " + connected.status().ToString());
  } else {
    st.collective = std::move(connected).value();
  }
  return {
      [=](sync_atom, int64_t batch, uint8_t kind, double sent_s, std::vector<float>& x) -> caf::result<void> {
        double behind = 0;
        if (!RunJob(self, batch, kind, sent_s, &behind,
                    [&](gpu::Collective& c) { return c.AllReduceRankOrder(x.data(), x.size()); })) {
          return caf::unit;
        }
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), synced_atom::value, batch, kind, behind,
                   std::move(x));
        return caf::unit;
      },
      [=](sync_atom, int64_t batch, uint8_t kind, double sent_s, uint64_t address, uint64_t n) -> caf::result<void> {
        auto& st = self->state;
        // An address is this process's memory: only a local trainer may
        // name one (a message from another node is refused, never followed).
        if (const caf::strong_actor_ptr& sender = self->current_sender(); !sender || sender->node() != self->node()) {
          if (!st.broken) {
            st.broken = true;
            self->send(st.args.driver, error_atom::value,
                       "sync scheduler of trainer " + std::to_string(st.args.rank) + ", batch " +
                           std::to_string(batch) + ": a sum in a backend's memory from another process (" +
                           (sender ? caf::to_string(sender->node()) : std::string("no sender")) + "), refused");
          }
          return caf::unit;
        }
        if (st.args.backend == nullptr) {
          if (!st.broken) {
            st.broken = true;
            self->send(st.args.driver, error_atom::value,
                       "sync scheduler of trainer " + std::to_string(st.args.rank) + ", batch " +
                           std::to_string(batch) + ": a sum in a backend's memory, but no backend was given");
          }
          return caf::unit;
        }
        double behind = 0;
        if (!RunJob(self, batch, kind, sent_s, &behind, [&](gpu::Collective& c) {
              return c.AllReduceResident(*st.args.backend, ResidentPointer(address), n);
            })) {
          return caf::unit;
        }
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), synced_atom::value, batch, kind, behind, n);
        return caf::unit;
      },
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor SpawnSyncScheduler(caf::actor_system& sys, SyncSchedulerArgs args) {
  return sys.spawn<caf::detached>(Scheduler, std::move(args));
}

}  // namespace actorrec::trainer
