// Which member of the topology this process is, from `actorrec node` flags.
#pragma once

#include <optional>
#include <string>

#include "base/status.hpp"
#include "configs/config.hpp"

namespace actorrec {

// `member` names it outright; otherwise `role` picks the members that run it
// ("all": members that run all four roles) and `rank` the rank-th of those in
// topology order. With both, the named member must run the role. Errors name
// the candidates so the user can pick one.
Result<std::string> SelectMember(const config::ClusterConfig& cluster, const std::string& member,
                                 const std::string& role, int rank);

}  // namespace actorrec
