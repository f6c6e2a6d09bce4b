// [cluster] and [[cluster.member]]: the shared secret, timeouts, members and
// the topology rules that tie them together; see sections.hpp.
#include <algorithm>
#include <climits>
#include <map>
#include <vector>

#include "configs/names.hpp"
#include "configs/sections.hpp"

namespace actorrec::config {

namespace {

// Fewer characters than this are guessable; the secret authenticates peers.
constexpr size_t kMinSecretLength = 16;

// Where a member's keys are, for topology messages written after reading.
struct MemberLines {
  int name = 0;
  int port = 0;
  int roles = 0;
};

std::string MemberPath(size_t index) { return "cluster.member[" + std::to_string(index) + "]"; }

// Reads one [[cluster.member]]. Returns false when its roles or per-role
// counts are invalid, so that role-count checks would only add noise.
bool ReadMember(TableReader& t, Member* m, MemberLines* lines) {
  m->line = t.line();
  lines->name = t.LineOf("name");
  lines->port = t.LineOf("port");
  lines->roles = t.LineOf("roles");
  bool complete = true;

  if (t.Require("name", "every member needs a unique name (e.g. name = \"a\")")) {
    if (auto name = t.String("name")) {
      if (IsValidName(*name)) {
        m->name = *name;
      } else {
        t.Fail("name", "expected 1 to 64 of the characters A-Z a-z 0-9 _ . -; got " + Quote(*name));
      }
    }
  }
  if (t.Require("address", "the IP address or host name this member listens on and is reached "
                           "at (e.g. address = \"127.0.0.1\")")) {
    if (auto address = t.String("address")) {
      if (address->find_first_of(" \t\r\n") == std::string::npos) {
        m->address = *address;
      } else {
        t.Fail("address", "expected an IP address or host name without spaces; got " +
                              Quote(*address));
      }
    }
  }
  if (auto port = t.Int("port", 0, 65535)) m->port = static_cast<uint16_t>(*port);

  bool roles_known = false;
  if (t.Require("roles", "the roles this member hosts, from sampler, oracle, embedding, trainer, "
                         "all (e.g. roles = [\"all\"])")) {
    if (auto spelled = t.ChoiceArray("roles", kRoleSpellings)) {
      roles_known = true;
      const bool spare = std::find(spelled->begin(), spelled->end(), 5) != spelled->end();
      if (spare && spelled->size() > 1) {
        t.Fail("roles", "\"spare\" stands alone: a spare has no roles until it takes over a lost member's; "
                        "write roles = [\"spare\"]");
        roles_known = false;
      }
      for (size_t index : spare ? std::vector<size_t>{} : *spelled) {
        // "all" (the last spelling) stands for the four roles.
        size_t first = index == 4 ? 0 : index, last = index == 4 ? 3 : index;
        for (size_t r = first; r <= last; ++r) {
          Role role = static_cast<Role>(r);
          if (m->Has(role)) {
            t.Fail("roles", "lists the role " + std::string(kRoleNames[r]) +
                                " twice (\"all\" already includes every role); list each role once");
            roles_known = false;
            break;
          }
          m->roles.push_back(role);
        }
      }
    }
  }
  complete = complete && roles_known;

  // A count is meaningful only for a member that hosts the role.
  auto read_count = [&](std::string_view key, Role role, int* out) {
    const std::string why = "allowed only for a member with the " +
                            std::string(kRoleNames[static_cast<int>(role)]) + " role";
    if (!roles_known) {
      t.Int(key, 1, 1024);  // types only
    } else if (m->Has(role)) {
      *out = 1;
      if (t.Has(key)) {
        auto count = t.Int(key, 1, 1024);
        if (count) *out = static_cast<int>(*count);
        complete = complete && count.has_value();
      }
    } else {
      t.NotApplicable(key, why);
    }
  };
  read_count("trainers", Role::kTrainer, &m->trainers);
  read_count("embedding_shards", Role::kEmbedding, &m->embedding_shards);

  static constexpr std::string_view kKeys[] = {"name",  "address",  "port",
                                               "roles", "trainers", "embedding_shards"};
  t.Finish(kKeys);
  return complete;
}

void ReadSecret(TableReader& t, const std::filesystem::path& base_dir, ClusterConfig* cluster) {
  auto secret = t.String("secret");
  auto secret_file = t.String("secret_file");
  if (t.Has("secret") && t.Has("secret_file")) {
    t.Fail("secret_file", "cluster.secret is set too (line " + std::to_string(t.LineOf("secret")) +
                              "); set exactly one of secret and secret_file");
    return;
  }
  if (!t.Has("secret") && !t.Has("secret_file")) {
    t.problems()->Add(t.line(), t.KeyPath("secret"),
                      "missing; set cluster.secret (at least 16 characters) or "
                      "cluster.secret_file (a file holding it), the same on every member");
    return;
  }
  // Messages give the secret's length, never the secret itself.
  if (secret) {
    if (secret->size() < kMinSecretLength) {
      t.Fail("secret", "expected at least 16 characters; got " + std::to_string(secret->size()) +
                           " (use a long random string, e.g. from `openssl rand -hex 16`)");
      return;
    }
    cluster->secret = *secret;
  }
  if (secret_file) {
    std::string path = ResolvePath(base_dir, *secret_file);
    std::string text, error;
    if (!ReadFileText(path, &text, &error)) {
      t.Fail("secret_file", "cannot read " + Quote(path) + ": " + error);
      return;
    }
    // Editors and `echo` add a final newline that is no part of the secret.
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    if (text.size() < kMinSecretLength) {
      t.Fail("secret_file", "the secret in " + Quote(path) + " has " +
                                std::to_string(text.size()) +
                                " characters; expected at least 16 (use a long random string, "
                                "e.g. from `openssl rand -hex 16`)");
      return;
    }
    cluster->secret = text;
  }
}

// The rules between members. `complete`: every member's roles and counts
// were valid, so counting roles gives meaningful answers.
void CheckTopology(TableReader& t, const std::vector<MemberLines>& lines, bool complete,
                   ClusterConfig* cluster) {
  ProblemList* problems = t.problems();
  std::vector<Member>& members = cluster->members;

  std::map<std::string, size_t> by_name;
  std::map<std::string, size_t> by_endpoint;
  for (size_t i = 0; i < members.size(); ++i) {
    const Member& m = members[i];
    if (!m.name.empty()) {
      auto [it, inserted] = by_name.emplace(m.name, i);
      if (!inserted) {
        problems->Add(lines[i].name, MemberPath(i) + ".name",
                      "duplicate member name " + Quote(m.name) + " (first declared on line " +
                          std::to_string(lines[it->second].name) + "); names must be unique");
      }
    }
    // Port 0 picks a free port at start-up, so it never collides.
    if (!m.address.empty() && m.port != 0) {
      std::string endpoint = m.address + ":" + std::to_string(m.port);
      auto [it, inserted] = by_endpoint.emplace(endpoint, i);
      if (!inserted) {
        const Member& first = members[it->second];
        problems->Add(lines[i].port, MemberPath(i) + ".port",
                      endpoint + " is already used by member " + Quote(first.name) + " (line " +
                          std::to_string(lines[it->second].port) +
                          "); give each member its own address and port");
      }
    }
  }
  if (!complete || members.empty()) return;

  // Exactly one sampler and one oracle: each role is a single actor that
  // orders the whole run.
  const int first_line = members.front().line;
  for (Role role : {Role::kSampler, Role::kOracle}) {
    const std::string name = RoleName(role);
    std::vector<size_t> holders;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].Has(role)) holders.push_back(i);
    }
    if (holders.empty()) {
      problems->Add(first_line, "cluster.member",
                    "no member has the " + name + " role; exactly one must (add \"" + name +
                        "\" to the roles of one member)");
    }
    for (size_t k = 1; k < holders.size(); ++k) {
      const size_t i = holders[k], first = holders[0];
      problems->Add(lines[i].roles, MemberPath(i) + ".roles",
                    "member " + Quote(members[i].name) + " has the " + name +
                        " role, but so does member " + Quote(members[first].name) + " (line " +
                        std::to_string(lines[first].roles) + "); exactly one member must host the " +
                        name);
    }
  }
  for (Role role : {Role::kEmbedding, Role::kTrainer}) {
    const std::string name = RoleName(role);
    bool any = false;
    for (const Member& m : members) any = any || m.Has(role);
    if (!any) {
      problems->Add(first_line, "cluster.member",
                    "no member has the " + name + " role; at least one must (add \"" + name +
                        "\" to the roles of a member)");
    }
  }

  // The coordinator hosts the supervisor and inspector; by default it sits
  // with the oracle, which already talks to every member.
  // Spares (roles = ["spare"]) take over a lost member's roles through
  // their agents, after a restart of the cluster.
  for (size_t i = 0; i < members.size(); ++i) {
    if (!members[i].roles.empty()) continue;
    if (cluster->max_restarts == 0) {
      problems->Add(lines[i].roles, MemberPath(i) + ".roles",
                    "member " + Quote(members[i].name) +
                        " is a spare, which takes over a lost member's roles only when the cluster recovers by "
                        "itself; set cluster.max_restarts above 0");
    }
    if (members[i].name == cluster->coordinator) {
      problems->Add(lines[i].roles, MemberPath(i) + ".roles",
                    "member " + Quote(members[i].name) +
                        " is a spare and cannot be cluster.coordinator; name a member with roles");
    }
  }
  const bool chosen = !cluster->coordinator.empty();
  if (chosen) {
    if (cluster->Find(cluster->coordinator) == nullptr) {
      std::string names;
      for (const Member& m : members) names += (names.empty() ? "" : ", ") + m.name;
      t.Fail("coordinator", "no member is named " + Quote(cluster->coordinator) +
                                "; expected one of " + names);
      return;
    }
  } else {
    for (const Member& m : members) {
      if (m.Has(Role::kOracle)) cluster->coordinator = m.name;
    }
  }
  const Member* coordinator = cluster->Find(cluster->coordinator);
  if (coordinator != nullptr && members.size() > 1 && coordinator->port == 0) {
    const size_t i = static_cast<size_t>(coordinator - members.data());
    problems->Add(lines[i].port, MemberPath(i) + ".port",
                  "member " + Quote(coordinator->name) + " is the coordinator" +
                      (chosen ? "" : " (by default, the member with the oracle role)") +
                      ", which the other members connect to, so its port must not be 0 when the "
                      "cluster has more than one member; choose a fixed port (e.g. port = 7700)");
  }
}

}  // namespace

bool ReadCluster(TableReader& t, const std::filesystem::path& base_dir, ClusterConfig* cluster) {
  ReadSecret(t, base_dir, cluster);
  if (auto coordinator = t.String("coordinator")) cluster->coordinator = *coordinator;

  auto heartbeat = t.Int("heartbeat_ms", 10, 60000);
  if (heartbeat) cluster->heartbeat_ms = static_cast<int>(*heartbeat);
  auto peer_timeout = t.Int("peer_timeout_ms", 1, INT_MAX);
  if (peer_timeout) cluster->peer_timeout_ms = static_cast<int>(*peer_timeout);
  // A peer is declared lost only after three missed heartbeats, so one late
  // packet does not trigger a recovery.
  const bool peer_default = !t.Has("peer_timeout_ms");
  if ((peer_timeout || peer_default) && (heartbeat || !t.Has("heartbeat_ms")) &&
      cluster->peer_timeout_ms < 3 * cluster->heartbeat_ms) {
    t.Fail("peer_timeout_ms",
           "expected at least 3 x cluster.heartbeat_ms (" +
               std::to_string(3 * cluster->heartbeat_ms) + "), so that a peer is declared lost "
               "only after three missed heartbeats; got " + std::to_string(cluster->peer_timeout_ms) +
               (peer_default ? " (the default)" : ""));
  }
  if (auto join = t.Int("join_timeout_ms", 1, INT_MAX)) cluster->join_timeout_ms = static_cast<int>(*join);
  if (auto collective = t.Choice("collective", kCollectives)) cluster->collective = kCollectives[*collective];
  if (auto restarts = t.Int("max_restarts", 0, 1000)) cluster->max_restarts = static_cast<int>(*restarts);
  if (auto backoff = t.Int("restart_backoff_ms", 0, 600000)) cluster->restart_backoff_ms = static_cast<int>(*backoff);
  if (auto every = t.Int("snapshot_every", 1, 1000000000)) cluster->snapshot_every = static_cast<int>(*every);

  const size_t problems_before = t.problems()->size();
  std::vector<const toml::table*> tables = t.TableArray("member");
  const bool member_malformed = t.problems()->size() != problems_before;
  bool complete = true;
  std::vector<MemberLines> lines(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    TableReader member(tables[i], MemberPath(i), t.problems());
    Member m;
    complete = ReadMember(member, &m, &lines[i]) && complete;
    cluster->members.push_back(std::move(m));
  }
  if (tables.empty() && !member_malformed) {
    t.problems()->Add(t.LineOf("member"), "cluster.member",
                      "at least one [[cluster.member]] is required (one per process; see "
                      "configs/local.toml for a single-process example)");
  }
  static constexpr std::string_view kKeys[] = {"secret",          "secret_file",     "coordinator",
                                               "heartbeat_ms",    "peer_timeout_ms", "join_timeout_ms",
                                               "collective",      "max_restarts",    "restart_backoff_ms",
                                               "snapshot_every",  "member"};
  t.Finish(kKeys);

  CheckTopology(t, lines, complete, cluster);

  // Trainer ranks and shard ids are numbered in member order, so every
  // process derives the same numbering from the same file.
  int rank = 0, shard = 0;
  for (Member& m : cluster->members) {
    m.first_trainer_rank = rank;
    m.first_shard = shard;
    rank += m.trainers;
    shard += m.embedding_shards;
  }
  return complete;
}

}  // namespace actorrec::config
