// Per-actor message counters for the inspector: how many messages reached an
// actor's mailbox and how many it handled, so that its mailbox depth is the
// difference and its rate of messages the handled count's slope.
//
// CAF 0.17's actor metrics (actor_profiler) are compiled out of Debian's
// build (CAF_ENABLE_ACTOR_PROFILER unset), so each actor shell counts for
// itself: `Metered<Base>` overrides the two virtual functions every message
// passes, enqueue (on the sender's thread) and consume (on the actor's), and
// adds one relaxed atomic increment to each. A role opts in by spawning its
// behavior function with `using Self = Metered<caf::stateful_actor<S>>*;`.
//
// Thread-safety: ActorMeter's counters may be read from any thread at any
// time; a read of the two is not one snapshot (depth may be off by the
// messages in flight between the two loads, never negative: see Depth()).
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/scheduled_actor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace actorrec {

struct ActorMeter {
  std::atomic<uint64_t> enqueued{0};  // messages put into the mailbox
  std::atomic<uint64_t> handled{0};   // messages taken out and handled (skipped ones count when handled)

  // Messages waiting in the mailbox now (approximately: see above).
  uint64_t Depth() const {
    const uint64_t h = handled.load(std::memory_order_relaxed);
    const uint64_t e = enqueued.load(std::memory_order_relaxed);
    return e > h ? e - h : 0;
  }
};

// What a metered actor exposes, whatever its Base.
class MeteredActor {
 public:
  virtual ~MeteredActor() = default;
  // Outlives the actor: the inspector may read it after the actor ended.
  std::shared_ptr<const ActorMeter> meter() const { return meter_; }

 protected:
  std::shared_ptr<ActorMeter> meter_ = std::make_shared<ActorMeter>();
};

template <class Base>
class Metered : public Base, public MeteredActor {
 public:
  template <class... Ts>
  explicit Metered(caf::actor_config& cfg, Ts&&... xs) : Base(cfg, std::forward<Ts>(xs)...) {}

  void enqueue(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) override {
    meter_->enqueued.fetch_add(1, std::memory_order_relaxed);
    Base::enqueue(std::move(ptr), eu);
  }

  caf::invoke_message_result consume(caf::mailbox_element& x) override {
    const caf::invoke_message_result r = Base::consume(x);
    // A skipped message stays in the mailbox and comes back later.
    if (r != caf::invoke_message_result::skipped) meter_->handled.fetch_add(1, std::memory_order_relaxed);
    return r;
  }
  using Base::consume;
};

// An actor's planned name ("trainer[1]") and its counters.
struct NamedMeter {
  std::string name;
  std::shared_ptr<const ActorMeter> meter;
};

// The counters of a local metered actor; null for a proxy of a remote one or
// an actor that is not metered.
inline std::shared_ptr<const ActorMeter> MeterOf(const caf::actor& a) {
  auto* raw = caf::actor_cast<caf::abstract_actor*>(a);
  auto* metered = dynamic_cast<MeteredActor*>(raw);
  return metered ? metered->meter() : nullptr;
}

}  // namespace actorrec
