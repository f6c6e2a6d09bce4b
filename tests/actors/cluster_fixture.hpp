// A two-member topology built in code, for the actor cores' unit tests.
#pragma once

#include "configs/config.hpp"

namespace actorrec::testing {

// "a": sampler + oracle + embedding (1 shard), port 7701;
// "b": trainer (2 ranks) + embedding (2 shards), port 7702.
// GCC 12 at -O3 warns (-Wrestrict) on assigning short literals to these
// strings once inlined: a known false positive of its string code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
inline config::ClusterConfig TwoMemberCluster() {
  using config::Role;
  config::ClusterConfig c;
  c.secret = "a-secret-of-sixteen-chars";
  c.coordinator = "a";
  c.heartbeat_ms = 100;
  c.peer_timeout_ms = 1000;
  c.join_timeout_ms = 5000;
  config::Member a;
  a.name = "a";
  a.address = "127.0.0.1";
  a.port = 7701;
  a.roles = {Role::kSampler, Role::kOracle, Role::kEmbedding};
  a.embedding_shards = 1;
  config::Member b;
  b.name = "b";
  b.address = "127.0.0.1";
  b.port = 7702;
  b.roles = {Role::kTrainer, Role::kEmbedding};
  b.trainers = 2;
  b.embedding_shards = 2;
  b.first_shard = 1;
  c.members = {a, b};
  return c;
}
#pragma GCC diagnostic pop

}  // namespace actorrec::testing
