// The inspector's actor shell over a plain registry.
#include "actors/inspector/inspector_actor.hpp"

#include <caf/all.hpp>

#include <map>
#include <string>
#include <vector>

#include "actors/common/unexpected.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

struct Entry {
  std::string name;
  wire::Role role = wire::Role::SUPERVISOR;
  std::string member;
  bool alive = true;
  wire::Frame<wire::Stats> stats;  // latest, empty until the actor reports
};

struct InspectorState {
  static inline const char* name = "inspector";
  std::vector<Entry> entries;                    // in registration order
  std::map<caf::actor_addr, size_t> by_address;  // -> index in entries
  std::map<std::string, size_t> by_name;
};

using Self = caf::stateful_actor<InspectorState>*;

caf::message Answer(Self self, const wire::Frame<wire::InspectorQuery>& frame) {
  auto& st = self->state;
  auto query = wire::Open(frame);
  if (!query.ok()) return caf::make_message(wire::MakeError(wire::ErrorReply::Kind::FAILED, query.status().ToString()));
  auto q = query->root();
  switch (q.which()) {
    case wire::InspectorQuery::LIST_ACTORS:
      return caf::make_message(wire::Encode<wire::InspectorReply>([&](wire::InspectorReply::Builder b) {
        auto list = b.initActors(static_cast<unsigned>(st.entries.size()));
        for (unsigned i = 0; i < st.entries.size(); ++i) {
          list[i].setName(wire::AsText(st.entries[i].name));
          list[i].setRole(st.entries[i].role);
          list[i].setMember(wire::AsText(st.entries[i].member));
          list[i].setAlive(st.entries[i].alive);
        }
      }));
    case wire::InspectorQuery::ACTOR_STATS: {
      const std::string name = wire::Str(q.getActorStats());
      auto it = st.by_name.find(name);
      if (it == st.by_name.end() || st.entries[it->second].stats.bytes.empty()) {
        return caf::make_message(wire::MakeError(wire::ErrorReply::Kind::FAILED,
                                                 "inspector: no stats from an actor named '" + name + "'"));
      }
      auto stats = wire::Open(st.entries[it->second].stats);
      return caf::make_message(wire::Encode<wire::InspectorReply>(
          [&](wire::InspectorReply::Builder b) { b.setStats(stats->root()); }));
    }
    case wire::InspectorQuery::PLAN:
      break;
  }
  return caf::make_message(wire::MakeError(wire::ErrorReply::Kind::UNIMPLEMENTED,
                                           "inspector: this build has no oracle plans to show yet"));
}

caf::behavior Inspector(Self self) {
  self->set_default_handler(ReportUnexpected);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto it = self->state.by_address.find(dm.source);
    if (it != self->state.by_address.end()) self->state.entries[it->second].alive = false;
  });
  return {
      [=](const wire::Frame<wire::Register>& frame, const caf::actor& who) {
        auto reg = wire::Open(frame);
        if (!reg.ok()) return;
        auto& st = self->state;
        Entry e{wire::Str(reg->root().getName()), reg->root().getRole(), wire::Str(reg->root().getMember()), true, {}};
        st.by_name[e.name] = st.entries.size();
        st.by_address[who.address()] = st.entries.size();
        st.entries.push_back(std::move(e));
        self->monitor(who);
      },
      [=](const wire::Frame<wire::Stats>& frame) {
        auto stats = wire::Open(frame);
        if (!stats.ok()) return;
        auto it = self->state.by_name.find(wire::Str(stats->root().getActor()));
        if (it != self->state.by_name.end()) self->state.entries[it->second].stats = frame;
      },
      [=](const wire::Frame<wire::InspectorQuery>& f) { return Answer(self, f); },
  };
}

}  // namespace

caf::actor SpawnInspector(caf::actor_system& sys) { return sys.spawn(Inspector); }

}  // namespace actorrec
