// Member selection for `actorrec node`.
#include "actors/node/member_select.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

namespace actorrec {
namespace {

bool Runs(const config::Member& m, const std::string& role) {
  using config::Role;
  if (role == "all") {
    return m.Has(Role::kSampler) && m.Has(Role::kOracle) && m.Has(Role::kEmbedding) && m.Has(Role::kTrainer);
  }
  for (auto r : m.roles) {
    if (role == config::RoleName(r)) return true;
  }
  return false;
}

std::string RolesOf(const config::Member& m) {
  std::string out;
  for (auto r : m.roles) out += (out.empty() ? "" : ", ") + std::string(config::RoleName(r));
  return out;
}

}  // namespace

Result<std::string> SelectMember(const config::ClusterConfig& cluster, const std::string& member,
                                 const std::string& role, int rank) {
  static const char* kRoles[] = {"sampler", "oracle", "embedding", "trainer", "all"};
  if (!role.empty() && std::find(std::begin(kRoles), std::end(kRoles), role) == std::end(kRoles)) {
    return Status::InvalidArgument("--role=" + role + " is not a role; use sampler, oracle, embedding, trainer or all");
  }
  if (!member.empty()) {
    const config::Member* m = cluster.Find(member);
    if (m == nullptr) {
      std::string names;
      for (const auto& c : cluster.members) names += (names.empty() ? "" : ", ") + c.name;
      return Status::NotFound("--member " + member + " is not in the topology; its members are: " + names);
    }
    if (!role.empty() && !Runs(*m, role)) {
      return Status::InvalidArgument("member '" + member + "' does not run the " + role + " role (it runs " +
                                     RolesOf(*m) + ")");
    }
    return member;
  }
  if (role.empty()) {
    if (cluster.members.size() == 1) return cluster.members[0].name;
    return Status::InvalidArgument("the topology has several members: pass --member NAME, or --role R [--rank N]");
  }
  std::vector<std::string> candidates;
  for (const auto& m : cluster.members) {
    if (Runs(m, role)) candidates.push_back(m.name);
  }
  if (candidates.empty()) return Status::NotFound("no member of the topology runs the " + role + " role");
  if (rank < 0 || rank >= static_cast<int>(candidates.size())) {
    std::string names;
    for (size_t i = 0; i < candidates.size(); ++i) {
      names += (i ? ", " : "") + std::to_string(i) + ": " + candidates[i];
    }
    return Status::InvalidArgument("--rank " + std::to_string(rank) + " is out of range for role " + role +
                                   " (" + names + ")");
  }
  return candidates[rank];
}

}  // namespace actorrec
