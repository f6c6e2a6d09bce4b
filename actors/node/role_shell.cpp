// A role actor's registration with the supervisor.
#include "actors/node/role_shell.hpp"

#include <caf/all.hpp>

#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"
#include "messages/text.hpp"

namespace actorrec {
namespace {

struct RoleShellState {
  std::string actor_name;
  const char* name = "role";
};

caf::behavior RoleShell(caf::stateful_actor<RoleShellState>* self, std::string member, PlannedActor planned,
                        caf::actor supervisor) {
  self->state.actor_name = planned.name;
  self->state.name = self->state.actor_name.c_str();
  self->set_default_handler(ReportUnexpected);
  self->send(supervisor, RegisterFrame(member, planned));
  return {
      [=](stop_atom) { self->quit(); },
  };
}

}  // namespace

wire::Frame<wire::Register> RegisterFrame(const std::string& member, const PlannedActor& planned) {
  return wire::Encode<wire::Register>([&](wire::Register::Builder b) {
    b.setMember(wire::AsText(member));
    b.setRole(planned.role);
    b.setIndex(planned.index);
    b.setName(wire::AsText(planned.name));
  });
}

caf::actor SpawnRoleShell(caf::local_actor* parent, const std::string& member, const PlannedActor& planned,
                          const caf::actor& supervisor) {
  return parent->spawn(RoleShell, member, planned, supervisor);
}

}  // namespace actorrec
