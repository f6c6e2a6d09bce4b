// The actor plan of a member.
#include "actors/node/actor_plan.hpp"

namespace actorrec {

const char* RoleActorName(wire::Role role) {
  switch (role) {
    case wire::Role::SAMPLER: return "batch_sampler";
    case wire::Role::ORACLE: return "oracle";
    case wire::Role::EMBEDDING: return "embedding_shard";
    case wire::Role::TRAINER: return "trainer";
    case wire::Role::SUPERVISOR: return "supervisor";
    case wire::Role::INSPECTOR: return "inspector";
    case wire::Role::CACHE_PARTITION: return "cache_partition";
    case wire::Role::SYNC_SCHEDULER: return "sync_scheduler";
  }
  return "unknown";
}

namespace {
PlannedActor Indexed(wire::Role role, unsigned index) {
  return {role, index, std::string(RoleActorName(role)) + "[" + std::to_string(index) + "]"};
}
}  // namespace

std::vector<PlannedActor> ActorsOf(const config::Member& member) {
  using config::Role;
  std::vector<PlannedActor> out;
  if (member.Has(Role::kSampler)) out.push_back({wire::Role::SAMPLER, 0, "batch_sampler"});
  if (member.Has(Role::kOracle)) out.push_back({wire::Role::ORACLE, 0, "oracle"});
  if (member.Has(Role::kEmbedding)) {
    for (int s = 0; s < member.embedding_shards; ++s) {
      out.push_back(Indexed(wire::Role::EMBEDDING, member.first_shard + s));
    }
  }
  if (member.Has(Role::kTrainer)) {
    for (int t = 0; t < member.trainers; ++t) {
      const unsigned rank = member.first_trainer_rank + t;
      out.push_back(Indexed(wire::Role::TRAINER, rank));
      out.push_back(Indexed(wire::Role::CACHE_PARTITION, rank));
      out.push_back(Indexed(wire::Role::SYNC_SCHEDULER, rank));
    }
  }
  return out;
}

std::vector<PlannedActor> ActorsOf(const config::ClusterConfig& cluster) {
  std::vector<PlannedActor> out;
  for (const auto& m : cluster.members) {
    auto mine = ActorsOf(m);
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

}  // namespace actorrec
