// Which actors a member of the topology hosts, by name: the node spawns
// exactly these, and the supervisor waits for exactly these to register.
#pragma once

#include <string>
#include <vector>

#include "configs/config.hpp"
#include "messages/control.capnp.h"

namespace actorrec {

struct PlannedActor {
  wire::Role role;
  unsigned index = 0;   // trainer rank, shard id; 0 for singletons
  std::string name;     // unique in the cluster: "trainer[1]", "embedding_shard[0]"
};

// The actors that `member` hosts under `cfg`, in spawn order. The coordinator
// additionally hosts the supervisor and the inspector, which are not listed.
// Every trainer rank w brings trainer[w], cache_partition[w] and
// sync_scheduler[w]; every shard s brings embedding_shard[s].
std::vector<PlannedActor> ActorsOf(const config::Member& member);

// A spare (roles = ["spare"] in the topology): a member that hosts no
// actor, need not join, keeps no snapshot pieces and holds no replica until
// it takes over the roles of a member lost for good (docs/cluster.md).
inline bool IsSpare(const config::Member& member) { return member.roles.empty(); }

// Every actor of the cluster, member by member.
std::vector<PlannedActor> ActorsOf(const config::ClusterConfig& cluster);

const char* RoleActorName(wire::Role role);  // "batch_sampler", "trainer", ...

}  // namespace actorrec
